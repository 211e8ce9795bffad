"""Tool use in OpenAI's Chat Completions format: ``tools``, ``tool_calls`` and ``tool`` messages.

Chat Completions runs no tools itself, so provider-executed tools are never offered as tools;
the one it has, web search, is a request option that only its dedicated search models take
(:func:`web_search_options`).
A model's arguments arrive as JSON text; text that is not a JSON object is kept as
``raw_arguments`` so the platform can tell the model what was wrong with it.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from openai.types.chat import ChatCompletionMessageParam
from openai.types.chat.chat_completion_chunk import ChoiceDeltaToolCall
from openai.types.chat.chat_completion_message_tool_call import ChatCompletionMessageToolCall

from schemas.models import ChatMessage, ToolCall, ToolExecutor, ToolSpec


def tools_param(tools: list[ToolSpec]) -> list[dict[str, Any]]:
    """The ``tools`` parameter (platform tools only)."""
    return [
        {
            "type": "function",
            "function": {
                "name": tool.name,
                "description": tool.description,
                "parameters": tool.input_schema,
            },
        }
        for tool in tools
        if tool.executor is ToolExecutor.PLATFORM
    ]


WEB_SEARCH_OPTIONS = "web_search_options"
"""The ``provider_type`` of a provider tool that stands for Chat Completions' web search."""


def web_search_options(tools: list[ToolSpec], model: str) -> dict[str, Any] | None:
    """The ``web_search_options`` parameter, when web search is offered and ``model`` takes it.

    Only OpenAI's dedicated search models (``gpt-4o-search-preview``, ``gpt-5-search-api``,
    ...) accept the option; any other model refuses a request carrying it, so it is left out.
    """
    if "search" not in model:
        return None
    for tool in tools:
        if tool.executor is ToolExecutor.PROVIDER and tool.provider_type == WEB_SEARCH_OPTIONS:
            return dict(tool.provider_config)
    return None


def _arguments_text(call: ToolCall) -> str:
    if call.raw_arguments is not None:
        return call.raw_arguments
    return json.dumps(call.arguments, ensure_ascii=False)


def messages_param(system: str, messages: list[ChatMessage]) -> list[ChatCompletionMessageParam]:
    """The system instruction and chat messages as Chat Completions messages."""
    out: list[dict[str, Any]] = []
    if system:
        out.append({"role": "system", "content": system})
    for m in messages:
        if m.role == "tool":
            out.append({"role": "tool", "tool_call_id": m.tool_call_id or "", "content": m.content})
        elif m.role == "assistant" and m.tool_calls:
            out.append(
                {
                    "role": "assistant",
                    "content": m.content or None,
                    "tool_calls": [
                        {
                            "id": call.id,
                            "type": "function",
                            "function": {"name": call.name, "arguments": _arguments_text(call)},
                        }
                        for call in m.tool_calls
                    ],
                }
            )
        elif m.images and m.role == "user":
            out.append({"role": "user", "content": _with_images(m)})
        else:
            out.append({"role": m.role, "content": m.content})
    return out  # type: ignore[return-value]  # built as plain dicts of the documented shapes


def _with_images(message: ChatMessage) -> list[dict[str, Any]]:
    """A user message's text and pictures as content parts (pictures as data URLs)."""
    parts: list[dict[str, Any]] = [{"type": "text", "text": message.content}]
    parts.extend(
        {"type": "image_url", "image_url": {"url": f"data:{image.media_type};base64,{image.data}"}}
        for image in message.images
    )
    return parts


def parse_call(call_id: str, name: str, text: str) -> ToolCall:
    """One call, its arguments parsed when they are a JSON object."""
    try:
        value = json.loads(text) if text.strip() else {}
    except ValueError:
        value = None
    return ToolCall.as_sent(call_id, name, value, text)


def tool_calls(calls: Iterable[ChatCompletionMessageToolCall] | None) -> list[ToolCall]:
    """The function calls of a completed (unstreamed) reply."""
    out: list[ToolCall] = []
    for call in calls or ():
        function = getattr(call, "function", None)
        if function is None:
            continue  # a custom (non-function) tool call: never offered by Persyn
        out.append(parse_call(call.id, function.name, function.arguments or ""))
    return out


@dataclass
class _Partial:
    id: str = ""
    name: str = ""
    arguments: list[str] = field(default_factory=list)


@dataclass
class StreamedCalls:
    """Tool calls assembled from stream deltas, which arrive in pieces keyed by index."""

    _parts: dict[int, _Partial] = field(default_factory=dict)

    def add(self, deltas: Iterable[ChoiceDeltaToolCall] | None) -> None:
        """Fold one chunk's tool-call deltas in."""
        for delta in deltas or ():
            part = self._parts.setdefault(delta.index, _Partial())
            part.id = delta.id or part.id
            if delta.function is not None:
                part.name = delta.function.name or part.name
                if delta.function.arguments:
                    part.arguments.append(delta.function.arguments)

    def calls(self) -> list[ToolCall]:
        """The complete calls, in index order."""
        return [
            parse_call(part.id or f"call_{index}", part.name, "".join(part.arguments))
            for index, part in sorted(self._parts.items())
        ]
