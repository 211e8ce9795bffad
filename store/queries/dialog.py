"""Conversations and verbatim turns: written through from the workflows, idempotently."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from sqlalchemy import update
from sqlalchemy.dialects.postgresql import insert
from sqlmodel import col, select
from sqlmodel.ext.asyncio.session import AsyncSession

from schemas.dialog import DialogTurn, Role
from schemas.events import ChannelRef
from store.queries.people import ensure_channel
from store.tables import Conversation, DialogTurnRow


async def open_conversation(
    session: AsyncSession,
    *,
    conversation_id: str,
    agent: str,
    channel: ChannelRef,
    opened_at: datetime,
    source: str = "live",
) -> None:
    """Record a conversation as open (a no-op if it already is)."""
    channel_id = await ensure_channel(session, agent=agent, channel=channel, seen_at=opened_at)
    await session.exec(
        insert(Conversation)
        .values(
            id=conversation_id,
            agent=agent,
            channel_id=channel_id,
            status="open",
            opened_at=opened_at,
            turns=0,
            participants=[],
            source=source,
        )
        .on_conflict_do_nothing(index_elements=["id"])
    )
    await session.commit()


async def record_turn(
    session: AsyncSession, *, agent: str, channel: ChannelRef, turn: DialogTurn
) -> bool:
    """Write one turn through; returns ``False`` if it was already stored (a retry)."""
    channel_id = await ensure_channel(session, agent=agent, channel=channel, seen_at=turn.at)
    result = await session.exec(
        insert(DialogTurnRow)
        .values(
            id=turn.turn_id,
            agent=agent,
            conversation_id=turn.conversation_id,
            channel_id=channel_id,
            role=turn.role.value,
            speaker_id=turn.speaker_id,
            speaker_name=turn.speaker_name,
            person_id=turn.speaker_id if turn.role is Role.PERSON else None,
            text=turn.text,
            at=turn.at,
        )
        .on_conflict_do_nothing(index_elements=["id"])
        .returning(DialogTurnRow.__table__.c.id)  # type: ignore[attr-defined]
    )
    stored = result.scalar_one_or_none() is not None
    if stored:
        conversation = await session.get(Conversation, turn.conversation_id)
        participants = list(conversation.participants) if conversation is not None else []
        if turn.role is Role.PERSON and turn.speaker_id not in participants:
            participants.append(turn.speaker_id)
        await session.exec(
            update(Conversation)
            .where(col(Conversation.id) == turn.conversation_id)
            .values(turns=Conversation.turns + 1, participants=participants)
        )
    await session.commit()
    return stored


async def close_conversation(
    session: AsyncSession, *, conversation_id: str, closed_at: datetime, reason: str
) -> None:
    """Mark a conversation closed."""
    await session.exec(
        update(Conversation)
        .where(col(Conversation.id) == conversation_id)
        .values(status="closed", closed_at=closed_at, close_reason=reason)
    )
    await session.commit()


def _to_turn(row: DialogTurnRow) -> DialogTurn:
    return DialogTurn(
        turn_id=row.id,
        conversation_id=row.conversation_id,
        role=Role(row.role),
        speaker_id=row.speaker_id,
        speaker_name=row.speaker_name,
        text=row.text,
        at=row.at,
    )


async def load_turns(session: AsyncSession, *, turn_ids: Sequence[str]) -> list[DialogTurn]:
    """The turns with these IDs, in ID (chronological) order."""
    if not turn_ids:
        return []
    rows = await session.exec(
        select(DialogTurnRow)
        .where(col(DialogTurnRow.id).in_(list(turn_ids)))
        .order_by(col(DialogTurnRow.id))
    )
    return [_to_turn(row) for row in rows]


async def conversation_turns(
    session: AsyncSession, *, conversation_id: str, limit: int = 1000
) -> list[DialogTurn]:
    """A conversation's turns, oldest first."""
    rows = await session.exec(
        select(DialogTurnRow)
        .where(DialogTurnRow.conversation_id == conversation_id)
        .order_by(col(DialogTurnRow.id))
        .limit(limit)
    )
    return [_to_turn(row) for row in rows]
