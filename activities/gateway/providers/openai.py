"""OpenAI's Chat Completions API, and any OpenAI-compatible endpoint, through the official SDK.

The SDK never retries (``max_retries=0``): Temporal owns retries, so each attempt is visible in
the workflow history and backs off by the policy.
"""

from __future__ import annotations

import re
from typing import Any

import openai
from openai.types import CompletionUsage

from activities.gateway.base import DeltaCallback, Provider
from activities.gateway.errors import classify_status, retry_after_seconds
from activities.gateway.providers import openai_tools
from contract.provider_errors import ProviderError, ProviderServerError, ProviderTimeoutError
from schemas.models import (
    ModelBinding,
    ModelRequest,
    ModelResponse,
    ProviderName,
    Sampling,
    TokenUsage,
    ToolCall,
)

_SCHEMA_NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")


class OpenAIProvider(Provider):
    """Chat models at OpenAI, or at ``base_url`` for an OpenAI-compatible server."""

    def __init__(
        self,
        api_key: str,
        base_url: str | None,
        timeout_seconds: float,
        provider: ProviderName = ProviderName.OPENAI,
    ) -> None:
        self.name = provider.value
        self._provider = provider
        self._client = openai.AsyncOpenAI(
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

        With ``on_delta`` the reply is streamed; usage still arrives, in the final chunk. With
        ``request.response_schema`` the reply text is a JSON document of that schema, consumed
        whole, so it is not streamed and ``on_delta`` is not called. Otherwise the model may
        call any of ``request.tools``; the calls come back in ``tool_calls``.

        Raises:
            ProviderError: A classified failure.
        """
        return await self._exchange(self._params(request, binding), request, binding, on_delta)

    async def _exchange(
        self,
        params: dict[str, Any],
        request: ModelRequest,
        binding: ModelBinding,
        on_delta: DeltaCallback | None,
    ) -> ModelResponse:
        """Send ``params`` (built from ``request``) and map the answer or the failure."""
        try:
            calls: list[ToolCall] = []
            forward = on_delta if request.response_schema is None else None
            if self._streams(forward):
                text, finish, model, usage, calls = await self._stream(params, forward or _ignore)
            else:
                completion = await self._client.chat.completions.create(**params)
                choice = completion.choices[0] if completion.choices else None
                text = (choice.message.content or "") if choice else ""
                finish = choice.finish_reason if choice else None
                model, usage = completion.model, completion.usage
                if choice is not None:
                    calls = openai_tools.tool_calls(choice.message.tool_calls)
        except openai.OpenAIError as err:
            raise _classify(self._provider, err) from err
        return ModelResponse(
            text=text,
            model=model or binding.model,
            provider=self._provider,
            finish_reason=finish,
            usage=_usage(usage),
            tool_calls=calls,
        )

    async def _stream(
        self, params: dict[str, Any], on_delta: DeltaCallback
    ) -> tuple[str, str | None, str | None, CompletionUsage | None, list[ToolCall]]:
        pieces: list[str] = []
        finish: str | None = None
        model: str | None = None
        usage: CompletionUsage | None = None
        calls = openai_tools.StreamedCalls()
        stream = await self._client.chat.completions.create(
            **params, stream=True, stream_options={"include_usage": True}
        )
        async with stream:
            async for chunk in stream:
                model = chunk.model or model
                usage = chunk.usage or usage
                for choice in chunk.choices:
                    finish = choice.finish_reason or finish
                    calls.add(choice.delta.tool_calls)
                    if choice.delta.content:
                        pieces.append(choice.delta.content)
                        await on_delta(choice.delta.content)
        return "".join(pieces), finish, model, usage, calls.calls()

    def _streams(self, on_delta: DeltaCallback | None) -> bool:
        """Whether to stream the call (always when someone watches the text arrive)."""
        return on_delta is not None

    def _messages(self, request: ModelRequest) -> list[Any]:
        return list(openai_tools.messages_param(request.system, request.messages))

    def _response_format(self, schema: dict[str, Any]) -> dict[str, Any] | None:
        return {
            "type": "json_schema",
            "json_schema": {
                "name": _schema_name(schema),
                "schema": schema,
                # Strict mode demands every property be required and no extras allowed;
                # the schemas here are ordinary pydantic ones, so ask for best effort.
                "strict": False,
            },
        }

    def _extra_body(self, sampling: Sampling) -> dict[str, Any]:
        """Sampling parameters outside the OpenAI API (none: OpenAI refuses unknown ones)."""
        return {}

    def _params(self, request: ModelRequest, binding: ModelBinding) -> dict[str, Any]:
        messages = self._messages(request)
        limit = request.max_output_tokens or binding.max_output_tokens
        # OpenAI deprecated max_tokens (its reasoning models refuse it); compatible servers
        # are often older and know only max_tokens.
        openai_proper = self._provider is ProviderName.OPENAI
        limit_key = "max_completion_tokens" if openai_proper else "max_tokens"
        params: dict[str, Any] = {"model": binding.model, "messages": messages, limit_key: limit}
        sampling = request.sampling or Sampling()
        for key in ("temperature", "top_p", "frequency_penalty", "presence_penalty"):
            value = getattr(sampling, key)
            if value is not None:
                params[key] = value
        if sampling.stop:
            params["stop"] = sampling.stop
        extra = self._extra_body(sampling)
        if extra:
            params["extra_body"] = extra
        if request.temperature is not None:
            params["temperature"] = request.temperature
        tools = openai_tools.tools_param(request.tools) if request.response_schema is None else []
        if tools:
            # Tool definitions come first in the prompt OpenAI caches automatically.
            params["tools"] = tools
            if request.tool_choice == "none":
                params["tool_choice"] = "none"
        search = openai_tools.web_search_options(request.tools, binding.model)
        if search is not None and request.response_schema is None:
            params["web_search_options"] = search
        if request.response_schema is not None:
            response_format = self._response_format(request.response_schema)
            if response_format is not None:
                params["response_format"] = response_format
        return params

    async def aclose(self) -> None:
        """Close the HTTP client."""
        await self._client.close()


async def _ignore(_: str) -> None:
    """A delta sink for a streamed call nobody watches."""


def _schema_name(schema: dict[str, Any]) -> str:
    title = str(schema.get("title", ""))
    return title if _SCHEMA_NAME.match(title) else "reply"


def _usage(usage: CompletionUsage | None) -> TokenUsage:
    if usage is None:
        return TokenUsage()
    details = usage.prompt_tokens_details
    return TokenUsage(
        input_tokens=usage.prompt_tokens,
        output_tokens=usage.completion_tokens,
        cached_read_tokens=(details.cached_tokens or 0) if details else 0,
        cached_write_tokens=(details.cache_write_tokens or 0) if details else 0,
    )


def _classify(provider: ProviderName, err: openai.OpenAIError) -> ProviderError:
    message = f"{provider.value}: {err}"
    if isinstance(err, openai.APITimeoutError):
        return ProviderTimeoutError(message)
    if isinstance(err, openai.APIStatusError):
        return classify_status(
            err.status_code, message, retry_after=retry_after_seconds(err.response.headers)
        )
    # Dropped connections, errors inside a stream, malformed responses: transient as far as
    # anyone can tell.
    return ProviderServerError(message)
