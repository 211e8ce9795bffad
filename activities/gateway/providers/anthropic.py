"""Anthropic's Messages API through the official async SDK.

The SDK never retries (``max_retries=0``): Temporal owns retries, so each attempt is visible in
the workflow history and backs off by the policy. The system instruction is one block marked
for prompt caching, because it is the stable prefix every turn of an agent repeats. Offered
tools go in the ``tools`` parameter (see :mod:`.anthropic_tools`), which the API places before
the system instruction in that prefix.
"""

from __future__ import annotations

import json
from typing import Any

import anthropic
from anthropic.types import (
    Message,
    MessageParam,
    TextBlockParam,
    ToolChoiceToolParam,
    ToolParam,
    Usage,
)

from activities.gateway.base import DeltaCallback, Provider
from activities.gateway.errors import classify_status, retry_after_seconds
from activities.gateway.providers import anthropic_tools
from contract.provider_errors import ProviderError, ProviderServerError, ProviderTimeoutError
from schemas.models import ModelBinding, ModelRequest, ModelResponse, ProviderName, TokenUsage

_TOOL_NAME = "respond"
_WRAPPED = "result"

# Errors sent inside an event stream arrive on a 200 response; their type tells what happened.
_ERROR_TYPE_STATUS = {
    "invalid_request_error": 400,
    "authentication_error": 401,
    "permission_error": 403,
    "not_found_error": 404,
    "request_too_large": 413,
    "rate_limit_error": 429,
    "api_error": 500,
    "overloaded_error": 529,
}


class AnthropicProvider(Provider):
    """Claude models over the Messages API (or a compatible endpoint at ``base_url``)."""

    name = ProviderName.ANTHROPIC.value

    def __init__(self, api_key: str, base_url: str | None, timeout_seconds: float) -> None:
        self._client = anthropic.AsyncAnthropic(
            api_key=api_key, base_url=base_url, timeout=timeout_seconds, max_retries=0
        )

    async def complete(
        self,
        request: ModelRequest,
        binding: ModelBinding,
        *,
        on_delta: DeltaCallback | None = None,
    ) -> ModelResponse:
        """Run one exchange.

        With ``request.response_schema`` the model must call a single tool whose input is the
        schema; the reply text is that input as JSON. Such a reply is a document consumed
        whole, so it is not streamed and ``on_delta`` is not called.

        Raises:
            ProviderError: A classified failure.
        """
        params = _params(request, binding)
        try:
            if request.response_schema is not None:
                message = await self._client.messages.create(**params, **_tool(request))
                text = _tool_text(message, wrapped=_needs_wrapping(request.response_schema))
            elif on_delta is None:
                message = await self._client.messages.create(**params)
                text = "".join(b.text for b in message.content if b.type == "text")
            else:
                async with self._client.messages.stream(**params) as stream:
                    async for piece in stream.text_stream:
                        await on_delta(piece)
                    message = await stream.get_final_message()
                text = "".join(b.text for b in message.content if b.type == "text")
        except anthropic.AnthropicError as err:
            raise _classify(err) from err
        structured = request.response_schema is not None
        return ModelResponse(
            text=text,
            model=message.model,
            provider=ProviderName.ANTHROPIC,
            finish_reason=message.stop_reason,
            usage=_usage(message.usage),
            tool_calls=[] if structured else anthropic_tools.tool_calls(message),
            provider_content=None if structured else anthropic_tools.provider_content(message),
        )

    async def aclose(self) -> None:
        """Close the HTTP client."""
        await self._client.close()


def _params(request: ModelRequest, binding: ModelBinding) -> dict[str, Any]:
    messages: list[MessageParam] = anthropic_tools.messages_param(request.messages)
    params: dict[str, Any] = {
        "model": binding.model,
        "max_tokens": request.max_output_tokens or binding.max_output_tokens,
        "messages": messages,
    }
    # A schema reply forces its own single tool (see _tool); offered tools would compete.
    tools = anthropic_tools.tools_param(request.tools) if request.response_schema is None else []
    if tools:
        params["tools"] = tools
        if request.tool_choice == "none":
            params["tool_choice"] = {"type": "none"}
    if request.system:  # the API refuses an empty text block
        system: list[TextBlockParam] = [
            {"type": "text", "text": request.system, "cache_control": {"type": "ephemeral"}}
        ]
        params["system"] = system
    # request.temperature is not sent: the API version this SDK speaks refuses every sampling
    # parameter (temperature, top_p, top_k) with a 400, whatever its value.
    return params


def _needs_wrapping(schema: dict[str, Any]) -> bool:
    return schema.get("type") != "object"


def _tool(request: ModelRequest) -> dict[str, Any]:
    schema = dict(request.response_schema or {})
    if _needs_wrapping(schema):
        # A tool's input must be an object: carry any other schema as its one property.
        defs = schema.pop("$defs", None)
        schema = {"type": "object", "properties": {_WRAPPED: schema}, "required": [_WRAPPED]}
        if defs is not None:
            schema["$defs"] = defs
    tool: ToolParam = {
        "name": _TOOL_NAME,
        "description": "Give the reply in exactly this structure.",
        "input_schema": schema,
    }
    choice: ToolChoiceToolParam = {"type": "tool", "name": _TOOL_NAME}
    return {"tools": [tool], "tool_choice": choice}


def _tool_text(message: Message, *, wrapped: bool) -> str:
    for block in message.content:
        if block.type == "tool_use" and block.name == _TOOL_NAME:
            value: Any = block.input
            if wrapped and isinstance(value, dict):
                value = value.get(_WRAPPED)
            return json.dumps(value, ensure_ascii=False)
    # A forced tool call that did not happen is the model's fault; another attempt may succeed.
    raise ProviderServerError("anthropic returned no structured reply")


def _usage(usage: Usage) -> TokenUsage:
    read = usage.cache_read_input_tokens or 0
    write = usage.cache_creation_input_tokens or 0
    # input_tokens counts every prompt token; Anthropic reports cached ones apart.
    return TokenUsage(
        input_tokens=usage.input_tokens + read + write,
        output_tokens=usage.output_tokens,
        cached_read_tokens=read,
        cached_write_tokens=write,
    )


def _classify(err: anthropic.AnthropicError) -> ProviderError:
    message = f"anthropic: {err}"
    if isinstance(err, anthropic.APITimeoutError):
        return ProviderTimeoutError(message)
    if isinstance(err, anthropic.APIStatusError):
        status = err.status_code
        if status < 400:
            status = _ERROR_TYPE_STATUS.get(str(err.type), 500)
        return classify_status(
            status, message, retry_after=retry_after_seconds(err.response.headers)
        )
    # Dropped connections and malformed responses: transient as far as anyone can tell.
    return ProviderServerError(message)
