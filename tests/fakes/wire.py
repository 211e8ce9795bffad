"""The bodies a fake provider answers with, in OpenAI's and Anthropic's wire formats.

Usage is fixed so tests can check the mapping: the prompt had ``PROMPT_TOKENS`` tokens, of which
``CACHED_READ`` were read from and ``CACHED_WRITE`` written to the prompt cache. OpenAI reports
the prompt total with the cached part inside it; Anthropic reports the uncached remainder and
the cached parts beside it.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

PROMPT_TOKENS = 40
COMPLETION_TOKENS = 7
CACHED_READ = 24
CACHED_WRITE = 6


def pieces(text: str) -> list[str]:
    """How a reply is split into streamed deltas: word by word, spacing kept."""
    return re.findall(r"\S+\s*", text)


def sse(data: dict[str, Any] | str, event: str | None = None) -> bytes:
    """One server-sent event."""
    payload = data if isinstance(data, str) else json.dumps(data)
    head = f"event: {event}\n" if event else ""
    return f"{head}data: {payload}\n\n".encode()


# OpenAI Chat Completions


def openai_usage() -> dict[str, Any]:
    return {
        "prompt_tokens": PROMPT_TOKENS,
        "completion_tokens": COMPLETION_TOKENS,
        "total_tokens": PROMPT_TOKENS + COMPLETION_TOKENS,
        "prompt_tokens_details": {"cached_tokens": CACHED_READ, "cache_write_tokens": CACHED_WRITE},
    }


def openai_error(status: int) -> dict[str, Any]:
    kind = {401: "invalid_api_key", 429: "rate_limit_exceeded"}.get(status, "server_error")
    return {"error": {"message": f"fake failure {status}", "type": kind, "code": kind}}


ToolCalls = list[tuple[str, "dict[str, Any] | str"]]
"""Scripted tool calls: (name, arguments); string arguments are sent as raw JSON text."""


def _arguments(arguments: dict[str, Any] | str) -> str:
    return arguments if isinstance(arguments, str) else json.dumps(arguments)


def openai_completion(
    body: dict[str, Any], text: str, calls: ToolCalls | None = None
) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": text or None}
    if calls:
        message["tool_calls"] = [
            {
                "id": f"call_fake_{index}",
                "type": "function",
                "function": {"name": name, "arguments": _arguments(arguments)},
            }
            for index, (name, arguments) in enumerate(calls)
        ]
    return {
        "id": "chatcmpl-fake",
        "object": "chat.completion",
        "created": 0,
        "model": body["model"],
        "choices": [
            {
                "index": 0,
                "message": message,
                "finish_reason": "tool_calls" if calls else "stop",
            }
        ],
        "usage": openai_usage(),
    }


def openai_stream(
    body: dict[str, Any], text: str, calls: ToolCalls | None = None
) -> Iterator[bytes]:
    def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        return {
            "id": "chatcmpl-fake",
            "object": "chat.completion.chunk",
            "created": 0,
            "model": body["model"],
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        }

    for piece in pieces(text):
        yield sse(chunk({"role": "assistant", "content": piece}))
    for index, (name, arguments) in enumerate(calls or []):
        # Real streams send the ID and name first, then the arguments in fragments.
        head = {"index": index, "id": f"call_fake_{index}", "type": "function"}
        yield sse(chunk({"tool_calls": [{**head, "function": {"name": name, "arguments": ""}}]}))
        text_args = _arguments(arguments)
        for start in range(0, len(text_args), 7):
            fragment = {"index": index, "function": {"arguments": text_args[start : start + 7]}}
            yield sse(chunk({"tool_calls": [fragment]}))
    yield sse(chunk({}, "tool_calls" if calls else "stop"))
    if (body.get("stream_options") or {}).get("include_usage"):
        final = chunk({})
        final.update(choices=[], usage=openai_usage())
        yield sse(final)
    yield sse("[DONE]")


# Anthropic Messages

_ANTHROPIC_ERRORS = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    429: "rate_limit_error",
    529: "overloaded_error",
}


def anthropic_usage() -> dict[str, Any]:
    return {
        "input_tokens": PROMPT_TOKENS - CACHED_READ - CACHED_WRITE,
        "output_tokens": COMPLETION_TOKENS,
        "cache_read_input_tokens": CACHED_READ,
        "cache_creation_input_tokens": CACHED_WRITE,
    }


def anthropic_error(status: int) -> dict[str, Any]:
    kind = _ANTHROPIC_ERRORS.get(status, "api_error")
    return {"type": "error", "error": {"type": kind, "message": f"fake failure {status}"}}


def anthropic_message(
    body: dict[str, Any], text: str, structured: Any, calls: ToolCalls | None = None
) -> dict[str, Any]:
    content: list[dict[str, Any]]
    if (body.get("tool_choice") or {}).get("type") == "tool":
        tool = body["tool_choice"]["name"]
        content = [{"type": "tool_use", "id": "toolu_fake", "name": tool, "input": structured}]
        stop = "tool_use"
    elif calls:
        content = [{"type": "text", "text": text}] if text else []
        content += [
            {
                "type": "tool_use",
                "id": f"toolu_fake_{index}",
                "name": name,
                # Anthropic always sends an object; raw text stands for what a model meant.
                "input": arguments if isinstance(arguments, dict) else {"raw": arguments},
            }
            for index, (name, arguments) in enumerate(calls)
        ]
        stop = "tool_use"
    else:
        content = [{"type": "text", "text": text}]
        stop = "end_turn"
    return {
        "id": "msg_fake",
        "type": "message",
        "role": "assistant",
        "model": body["model"],
        "content": content,
        "stop_reason": stop,
        "stop_sequence": None,
        "usage": anthropic_usage(),
    }


def anthropic_stream(
    body: dict[str, Any], text: str, *, fail: int = 0, calls: ToolCalls | None = None
) -> Iterator[bytes]:
    """The event stream of a text reply; with ``fail``, an error event instead of the reply."""
    start = anthropic_message(body, "", None)
    start.update(content=[], stop_reason=None, usage={**anthropic_usage(), "output_tokens": 1})
    yield _event({"type": "message_start", "message": start})
    if fail:
        yield _event(anthropic_error(fail))
        return
    block = {"type": "text", "text": ""}
    yield _event({"type": "content_block_start", "index": 0, "content_block": block})
    for piece in pieces(text):
        delta = {"type": "text_delta", "text": piece}
        yield _event({"type": "content_block_delta", "index": 0, "delta": delta})
    yield _event({"type": "content_block_stop", "index": 0})
    for offset, (name, arguments) in enumerate(calls or [], start=1):
        use = {"type": "tool_use", "id": f"toolu_fake_{offset - 1}", "name": name, "input": {}}
        yield _event({"type": "content_block_start", "index": offset, "content_block": use})
        partial = {"type": "input_json_delta", "partial_json": _arguments(arguments)}
        yield _event({"type": "content_block_delta", "index": offset, "delta": partial})
        yield _event({"type": "content_block_stop", "index": offset})
    end = {"stop_reason": "tool_use" if calls else "end_turn", "stop_sequence": None}
    usage = {"output_tokens": COMPLETION_TOKENS}
    yield _event({"type": "message_delta", "delta": end, "usage": usage})
    yield _event({"type": "message_stop"})


def _event(data: dict[str, Any]) -> bytes:
    """An Anthropic event: its name repeats its type."""
    return sse(data, str(data["type"]))
