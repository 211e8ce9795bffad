"""The emotional trajectory: store one reading per exchange, read the newest ones back."""

from __future__ import annotations

from datetime import datetime

from sqlmodel import col, delete, select
from sqlmodel.ext.asyncio.session import AsyncSession

from schemas.emotion import EmotionReadingPublic
from schemas.memory import Emotion
from store.sql import insert_once
from store.tables.emotion import EmotionReadingRow


def to_public(row: EmotionReadingRow) -> EmotionReadingPublic:
    """The wire view of a stored reading."""
    return EmotionReadingPublic(
        id=row.id,
        agent=row.agent,
        conversation_id=row.conversation_id,
        channel_key=row.channel_key,
        activation_id=row.activation_id,
        at=row.at,
        top=Emotion(row.top),
        probability=row.probability,
        distribution={Emotion(k): float(v) for k, v in row.distribution.items()},
    )


async def insert_reading(session: AsyncSession, *, reading: EmotionReadingPublic) -> bool:
    """Store ``reading`` unless its activation has one already; True if it was stored."""
    stored = await insert_once(
        session,
        EmotionReadingRow.__table__,  # type: ignore[attr-defined]
        {
            "id": reading.id,
            "agent": reading.agent,
            "conversation_id": reading.conversation_id,
            "channel_key": reading.channel_key,
            "activation_id": reading.activation_id,
            "at": reading.at,
            "top": reading.top.value,
            "probability": reading.probability,
            "distribution": {k.value: v for k, v in reading.distribution.items()},
        },
        key=["activation_id"],
        returning="id",
    )
    await session.commit()
    return stored is not None


async def prune_readings(session: AsyncSession, *, agent: str, before: datetime) -> int:
    """Drop the agent's readings taken before ``before``; returns how many went."""
    result = await session.exec(
        delete(EmotionReadingRow).where(
            col(EmotionReadingRow.agent) == agent, col(EmotionReadingRow.at) < before
        )
    )
    await session.commit()
    return int(result.rowcount or 0)


async def reading_for(session: AsyncSession, *, activation_id: str) -> EmotionReadingPublic | None:
    """The reading taken after ``activation_id``, if any."""
    row = (
        await session.exec(
            select(EmotionReadingRow).where(EmotionReadingRow.activation_id == activation_id)
        )
    ).first()
    return to_public(row) if row is not None else None


async def latest_readings(
    session: AsyncSession,
    *,
    agent: str,
    limit: int,
    conversation_id: str | None = None,
    until: datetime | None = None,
) -> list[EmotionReadingPublic]:
    """The agent's newest readings (of one conversation, if given), oldest first.

    ``until`` leaves out readings taken after that moment (a state as of a time).
    """
    query = select(EmotionReadingRow).where(EmotionReadingRow.agent == agent)
    if conversation_id is not None:
        query = query.where(EmotionReadingRow.conversation_id == conversation_id)
    if until is not None:
        query = query.where(col(EmotionReadingRow.at) <= until)
    query = query.order_by(col(EmotionReadingRow.at).desc(), col(EmotionReadingRow.id).desc())
    rows = (await session.exec(query.limit(limit))).all()
    return [to_public(row) for row in reversed(rows)]
