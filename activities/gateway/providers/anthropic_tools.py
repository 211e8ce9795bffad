"""Tool use in Anthropic's Messages format: ``tools``, ``tool_use`` and ``tool_result`` blocks.

Platform tools are advertised with their input schema; provider-executed (server) tools with
their own type. The last tool definition carries a cache breakpoint: tools precede the system
instruction in the prompt prefix, and they change far less often than the instruction's
volatile part, so they stay cached even when the rest of the prefix does not.
"""

from __future__ import annotations

from typing import Any

from anthropic.types import Message, MessageParam

from schemas.models import ChatMessage, ProviderName, ToolCall, ToolExecutor, ToolSpec

SERVER_BLOCK_TYPES = frozenset({"server_tool_use"})
"""Blocks that mean the provider ran a tool itself; the reply is then replayed verbatim."""


def tools_param(tools: list[ToolSpec]) -> list[dict[str, Any]]:
    """The ``tools`` parameter for ``tools`` (empty when none can be offered)."""
    out: list[dict[str, Any]] = []
    for tool in tools:
        if tool.executor is ToolExecutor.PROVIDER:
            if tool.provider not in (None, ProviderName.ANTHROPIC) or not tool.provider_type:
                continue  # another provider's server tool: not offered here
            out.append({"type": tool.provider_type, "name": tool.name, **tool.provider_config})
        else:
            out.append(
                {
                    "name": tool.name,
                    "description": tool.description,
                    "input_schema": tool.input_schema,
                }
            )
    if out:
        out[-1] = {**out[-1], "cache_control": {"type": "ephemeral"}}
    return out


def _assistant_content(message: ChatMessage) -> str | list[dict[str, Any]]:
    if message.provider_content:
        return message.provider_content
    if not message.tool_calls:
        return message.content
    blocks: list[dict[str, Any]] = []
    if message.content.strip():
        blocks.append({"type": "text", "text": message.content})
    blocks.extend(
        {"type": "tool_use", "id": call.id, "name": call.name, "input": call.arguments}
        for call in message.tool_calls
    )
    return blocks


def messages_param(messages: list[ChatMessage]) -> list[MessageParam]:
    """Chat messages as Anthropic messages.

    Consecutive tool results become one user message of ``tool_result`` blocks, as the API
    wants; a user message right after them joins that message, results first.
    """
    out: list[dict[str, Any]] = []
    results: list[dict[str, Any]] = []
    for message in messages:
        if message.role == "tool":
            results.append(
                {
                    "type": "tool_result",
                    "tool_use_id": message.tool_call_id or "",
                    "content": message.content,
                    "is_error": message.is_error,
                }
            )
            continue
        if results:
            if message.role == "user":
                text = {"type": "text", "text": message.content}
                out.append({"role": "user", "content": [*results, text]})
                results = []
                continue
            out.append({"role": "user", "content": results})
            results = []
        if message.role == "user" and message.images:
            out.append({"role": "user", "content": _with_images(message)})
        elif message.role == "user":
            out.append({"role": "user", "content": message.content})
        else:
            out.append({"role": "assistant", "content": _assistant_content(message)})
    if results:
        out.append({"role": "user", "content": results})
    return out  # type: ignore[return-value]  # built as plain dicts of the documented shapes


def _with_images(message: ChatMessage) -> list[dict[str, Any]]:
    """A user message's pictures as base64 image blocks, then its text (as the API advises)."""
    blocks: list[dict[str, Any]] = [
        {
            "type": "image",
            "source": {"type": "base64", "media_type": image.media_type, "data": image.data},
        }
        for image in message.images
    ]
    blocks.append({"type": "text", "text": message.content})
    return blocks


def tool_calls(message: Message) -> list[ToolCall]:
    """The platform tool calls a reply asks for."""
    calls: list[ToolCall] = []
    for block in message.content:
        if block.type != "tool_use":
            continue
        calls.append(ToolCall.as_sent(block.id, block.name, block.input))
    return calls


def provider_content(message: Message) -> list[dict[str, Any]] | None:
    """The reply's blocks, when the provider ran a tool or paused; ``None`` otherwise."""
    ran_tools = any(block.type in SERVER_BLOCK_TYPES for block in message.content)
    if not ran_tools and message.stop_reason != "pause_turn":
        return None
    return [block.model_dump(mode="json", exclude_none=True) for block in message.content]
