"""Shaping the tool loop's message list before each round of the response model."""

from __future__ import annotations

from activities.context.fencing import TOOL_RESULT, fence
from schemas.models import ChatMessage

BOUND_NOTE = (
    "(You have used every tool round this turn. Answer now in words, without calling tools; "
    "say plainly what you could not finish.)"
)
"""Told to the model on the last round, when it may no longer call tools."""

UNFINISHED = '{"error": "the tool did not finish; do not call it again this turn"}'


def with_all_results(messages: list[ChatMessage]) -> list[ChatMessage]:
    """``messages`` with an error result for every call that has none.

    A call whose activity gave up (or never ran) must still be answered, or the provider
    refuses the exchange; the model hears that the tool did not finish. Results may come in
    any order after their assistant turn, so the gaps are filled right after it.
    """
    answered = {m.tool_call_id for m in messages if m.role == "tool"}
    out: list[ChatMessage] = []
    for message in messages:
        out.append(message)
        if message.role == "assistant":
            out.extend(
                ChatMessage(role="tool", tool_call_id=call.id, content=UNFINISHED, is_error=True)
                for call in message.tool_calls
                if call.id not in answered
            )
    return out


def merge_user_turns(messages: list[ChatMessage]) -> list[ChatMessage]:
    """Consecutive user messages joined into one, as providers want turns to alternate."""
    out: list[ChatMessage] = []
    for message in messages:
        if out and message.role == "user" and out[-1].role == "user":
            joined = f"{out[-1].content}\n\n{message.content}"
            out[-1] = out[-1].model_copy(update={"content": joined})
        else:
            out.append(message)
    return out


def fenced_results(messages: list[ChatMessage]) -> list[ChatMessage]:
    """``messages`` with every tool result fenced as outside data.

    A result is whatever a web page, a file or another system returned: it may say anything,
    instructions included, and the model must read it as material.
    """
    return [
        m.model_copy(update={"content": fence(m.content, TOOL_RESULT)}) if m.role == "tool" else m
        for m in messages
    ]


def exchange(
    prompt: list[ChatMessage], extension: list[ChatMessage], *, final: bool
) -> list[ChatMessage]:
    """The messages for one round: the stored prompt's, then the loop's, ready to send."""
    messages = with_all_results([*prompt, *fenced_results(extension)])
    if final and extension:
        messages.append(ChatMessage(role="user", content=BOUND_NOTE))
    return merge_user_turns(messages)
