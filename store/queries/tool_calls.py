"""The tool loop's records: calls with their results, and the messages appended to a prompt.

A prompt's extension is the conversation with the model after the stored prompt: round ``r``'s
assistant turn sits at ``(r + 1) * ROUND_STRIDE`` and its tool results right after it, so a
retried round rewrites exactly its own positions.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from sqlalchemy import delete
from sqlalchemy.dialects.postgresql import insert
from sqlmodel import col, select
from sqlmodel.ext.asyncio.session import AsyncSession

from schemas.models import ChatMessage
from schemas.tools import ROUND_STRIDE, ToolCallRecord
from store.lane import Lane
from store.tables.autonomy import PromptExtensionRow, ToolCallRow


def assistant_position(round_: int) -> int:
    """Where round ``round_``'s assistant turn goes."""
    return (round_ + 1) * ROUND_STRIDE


def result_position(round_: int, seq: int) -> int:
    """Where the result of the ``seq``-th call of round ``round_`` goes."""
    return assistant_position(round_) + 1 + seq


async def put_extension(
    session: AsyncSession, *, prompt_id: str, position: int, message: ChatMessage, at: datetime
) -> None:
    """Write (or overwrite) one extension message; the caller commits."""
    await session.exec(
        insert(PromptExtensionRow)
        .values(
            prompt_id=prompt_id,
            position=position,
            message=message.model_dump(mode="json", exclude_defaults=True),
            created_at=at,
        )
        .on_conflict_do_update(
            index_elements=["prompt_id", "position"],
            set_={"message": message.model_dump(mode="json", exclude_defaults=True)},
        )
    )


async def load_extension(lane: Lane, *, prompt_id: str) -> list[ChatMessage]:
    """The prompt's extension messages in order (on the driver lane: every tool round reads)."""
    rows = await lane.rows(
        "SELECT message FROM prompt_extensions WHERE prompt_id = %(id)s ORDER BY position",
        {"id": prompt_id},
    )
    return [ChatMessage.model_validate(row["message"]) for row in rows]


async def save_round(
    session: AsyncSession,
    *,
    agent: str,
    prompt_id: str,
    activation_id: str | None,
    round_: int,
    message: ChatMessage,
    call_ids: Sequence[str],
    at: datetime,
) -> None:
    """Store round ``round_``: the assistant turn and one row per call (replacing a retry's)."""
    start = assistant_position(round_)
    await session.exec(
        delete(PromptExtensionRow).where(
            col(PromptExtensionRow.prompt_id) == prompt_id,
            col(PromptExtensionRow.position) >= start,
        )
    )
    await session.exec(
        delete(ToolCallRow).where(
            col(ToolCallRow.prompt_id) == prompt_id, col(ToolCallRow.round) >= round_
        )
    )
    await put_extension(session, prompt_id=prompt_id, position=start, message=message, at=at)
    for seq, (call_id, call) in enumerate(zip(call_ids, message.tool_calls, strict=True)):
        session.add(
            ToolCallRow(
                id=call_id,
                agent=agent,
                prompt_id=prompt_id,
                activation_id=activation_id or prompt_id,
                round=round_,
                seq=seq,
                provider_call_id=call.id,
                name=call.name,
                arguments=call.arguments,
                raw_arguments=call.raw_arguments,
                created_at=at,
            )
        )
    await session.commit()


async def get_call(session: AsyncSession, *, call_id: str) -> ToolCallRow | None:
    """One stored call."""
    return await session.get(ToolCallRow, call_id)


async def finish_call(
    session: AsyncSession, *, call_id: str, result: str, is_error: bool, at: datetime
) -> None:
    """Record a call's result and append it to the prompt's extension (idempotent)."""
    row = await session.get(ToolCallRow, call_id)
    if row is None:
        return
    row.result, row.is_error, row.finished_at = result, is_error, at
    session.add(row)
    message = ChatMessage(
        role="tool", tool_call_id=row.provider_call_id, content=result, is_error=is_error
    )
    await put_extension(
        session,
        prompt_id=row.prompt_id,
        position=result_position(row.round, row.seq),
        message=message,
        at=at,
    )
    await session.commit()


async def calls_of(session: AsyncSession, *, activation_ids: Sequence[str]) -> list[ToolCallRecord]:
    """Every call the given activations made, oldest first."""
    if not activation_ids:
        return []
    rows = await session.exec(
        select(ToolCallRow)
        .where(col(ToolCallRow.activation_id).in_(list(activation_ids)))
        .order_by(col(ToolCallRow.created_at), col(ToolCallRow.seq))
    )
    return [
        ToolCallRecord(
            call_id=row.id,
            activation_id=row.activation_id,
            name=row.name,
            arguments=row.arguments,
            result=row.result,
            is_error=row.is_error,
            created_at=row.created_at,
            finished_at=row.finished_at,
        )
        for row in rows
    ]
