"""The emotional trajectory: store one reading per exchange, read the newest ones back."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import literal, union_all
from sqlmodel import col, delete, select
from sqlmodel.ext.asyncio.session import AsyncSession
from sqlmodel.sql.expression import SelectOfScalar

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


def _newest(
    agent: str, limit: int, conversation_id: str | None, until: datetime | None
) -> SelectOfScalar[EmotionReadingRow]:
    """The agent's newest readings (of one conversation, if given), newest first."""
    query = select(EmotionReadingRow).where(EmotionReadingRow.agent == agent)
    if conversation_id is not None:
        query = query.where(EmotionReadingRow.conversation_id == conversation_id)
    if until is not None:
        query = query.where(col(EmotionReadingRow.at) <= until)
    newest_first = (col(EmotionReadingRow.at).desc(), col(EmotionReadingRow.id).desc())
    return query.order_by(*newest_first).limit(limit)


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
    rows = (await session.exec(_newest(agent, limit, conversation_id, until))).all()
    return [to_public(row) for row in reversed(rows)]


async def latest_here_and_anywhere(
    session: AsyncSession, *, agent: str, conversation_id: str, limit: int, until: datetime
) -> tuple[list[EmotionReadingPublic], list[EmotionReadingPublic]]:
    """:func:`latest_readings` of the agent and of one conversation, in one statement.

    Returns:
        The agent's newest readings, then the conversation's, each oldest first.
    """
    parts = [
        _newest(agent, limit, where, until).add_columns(literal(tag).label("part")).subquery()
        for tag, where in ((0, None), (1, conversation_id))
    ]
    both = union_all(*(select(part) for part in parts))
    columns = [c.name for c in EmotionReadingRow.__table__.columns]  # type: ignore[attr-defined]
    found: tuple[list[EmotionReadingPublic], list[EmotionReadingPublic]] = ([], [])
    connection = await session.connection()  # a Core statement: no ORM rows to build
    for row in (await connection.execute(both)).mappings():
        values = {name: row[name] for name in columns}
        found[row["part"]].append(to_public(EmotionReadingRow(**values)))
    # A union keeps no order: each part oldest first, as latest_readings returns it.
    anywhere, here = (sorted(part, key=lambda r: (r.at, r.id)) for part in found)
    return anywhere, here
