"""Queries of the Telegram channel's records (``store.tables.telegram``)."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy.dialects.postgresql import insert
from sqlmodel import select
from sqlmodel.ext.asyncio.session import AsyncSession

from store.sql import execute
from store.tables.telegram import TelegramInboundRow, TelegramOffsetRow, TelegramSentRow


async def next_offset(session: AsyncSession, *, bot_id: int) -> int | None:
    """The update ID the bot's poller asks for next, or ``None`` before its first update."""
    row = await session.get(TelegramOffsetRow, bot_id)
    return None if row is None else row.next_offset


async def save_offset(session: AsyncSession, *, bot_id: int, offset: int, at: datetime) -> None:
    """Remember ``offset`` as the next update to ask for; it never moves back (caller commits)."""
    statement = insert(TelegramOffsetRow).values(bot_id=bot_id, next_offset=offset, updated_at=at)
    await session.exec(
        statement.on_conflict_do_update(
            index_elements=["bot_id"],
            set_={"next_offset": offset, "updated_at": at},
            where=TelegramOffsetRow.next_offset < offset,  # type: ignore[arg-type]
        )
    )


async def remember_inbound(
    session: AsyncSession,
    *,
    event_id: str,
    agent: str,
    chat_id: int,
    message_id: int,
    at: datetime,
) -> None:
    """Record which Telegram message ``event_id`` came from (idempotent)."""
    await session.exec(
        insert(TelegramInboundRow)
        .values(
            event_id=event_id, agent=agent, chat_id=chat_id, message_id=message_id, received_at=at
        )
        .on_conflict_do_nothing(index_elements=["event_id"])
    )


_REPLIED_TO = """
    WITH reply AS (SELECT seq FROM dialog_turns WHERE id = :reply),
    last AS (
        SELECT d.id FROM dialog_turns d, reply
        WHERE d.conversation_id = :conversation AND d.role = 'person' AND d.seq < reply.seq
        ORDER BY d.seq DESC LIMIT 1
    )
    SELECT t.message_id FROM last JOIN telegram_inbound t ON t.event_id = last.id
    WHERE t.chat_id = :chat
"""


async def replied_message(
    session: AsyncSession, *, reply_turn: str, conversation_id: str, chat_id: int
) -> int | None:
    """The Telegram message a reply answers: the person's turn just before it, if from Telegram.

    The agent takes one input at a time, so the person's turn written last before the reply's
    is the one the reply answers.
    """
    result = await execute(
        session,
        _REPLIED_TO,
        {"reply": reply_turn, "conversation": conversation_id, "chat": chat_id},
    )
    found = result.scalar_one_or_none()
    return None if found is None else int(found)


async def sent_parts(session: AsyncSession, *, outbox_id: str) -> dict[int, int]:
    """The parts of an outbox message Telegram already accepted: part number to message ID."""
    rows = await session.exec(select(TelegramSentRow).where(TelegramSentRow.outbox_id == outbox_id))
    return {row.part: row.message_id for row in rows}


async def record_sent_part(
    session: AsyncSession,
    *,
    outbox_id: str,
    part: int,
    chat_id: int,
    message_id: int,
    at: datetime,
) -> None:
    """Record that Telegram accepted ``part`` of an outbox message (idempotent)."""
    await session.exec(
        insert(TelegramSentRow)
        .values(outbox_id=outbox_id, part=part, chat_id=chat_id, message_id=message_id, sent_at=at)
        .on_conflict_do_nothing(index_elements=["outbox_id", "part"])
    )
