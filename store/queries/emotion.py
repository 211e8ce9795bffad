"""The emotional trajectory: store one reading per exchange, read the newest ones back."""

from __future__ import annotations

from datetime import datetime
from typing import Any, LiteralString

from psycopg.types.json import Jsonb
from sqlmodel import col, delete
from sqlmodel.ext.asyncio.session import AsyncSession

from schemas.emotion import EmotionReadingPublic
from schemas.memory import Emotion
from store.lane import Lane, Row
from store.sql import insert_once
from store.tables.emotion import EmotionReadingRow


def _values(reading: EmotionReadingPublic) -> dict[str, Any]:
    """A reading's row."""
    return {
        "id": reading.id,
        "agent": reading.agent,
        "conversation_id": reading.conversation_id,
        "channel_key": reading.channel_key,
        "activation_id": reading.activation_id,
        "at": reading.at,
        "top": reading.top.value,
        "probability": reading.probability,
        "distribution": {k.value: v for k, v in reading.distribution.items()},
    }


async def insert_reading(session: AsyncSession, *, reading: EmotionReadingPublic) -> bool:
    """Store ``reading`` unless its activation has one already; True if it was stored."""
    stored = await insert_once(
        session,
        EmotionReadingRow.__table__,  # type: ignore[attr-defined]
        _values(reading),
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


_KEEP = """
    WITH kept AS (
        INSERT INTO emotion_readings
            (id, agent, conversation_id, channel_key, activation_id, at, top, probability,
             distribution)
        VALUES (%(id)s, %(agent)s, %(conversation_id)s, %(channel_key)s, %(activation_id)s,
                %(at)s, %(top)s, %(probability)s, %(distribution)s)
        ON CONFLICT (activation_id) DO NOTHING
        RETURNING id
    ), faded AS (
        DELETE FROM emotion_readings WHERE agent = %(agent)s AND at < %(before)s RETURNING id
    )
    SELECT (SELECT count(*) FROM kept) AS kept
"""


async def keep_reading(
    lane: Lane, *, reading: EmotionReadingPublic, prune_before: datetime
) -> bool:
    """Store ``reading`` once per activation and drop the agent's readings before a moment.

    One statement on the lane for the step every exchange takes: the insert (nothing if the
    activation has a reading already) and the prune of readings taken before
    ``prune_before``, each atomic alone. Returns whether the reading was stored.
    """
    values = _values(reading)
    row = await lane.first(
        _KEEP,
        {**values, "distribution": Jsonb(values["distribution"]), "before": prune_before},
    )
    return row is not None and row["kept"] > 0


# The reads below run on the driver lane: every prompt, every reading and every review asks
# for the state, and through the session the statement building and row objects cost more
# than the read itself.
_SELECT = (
    "SELECT id, agent, conversation_id, channel_key, activation_id, at, top, probability, "
    "distribution FROM emotion_readings "
)
_NEWEST_FIRST = " ORDER BY at DESC, id DESC LIMIT %(limit)s"
_OF_AGENT = "WHERE agent = %(agent)s"
_IN_CONVERSATION = " AND conversation_id = %(conversation_id)s"
_UNTIL = " AND at <= %(until)s"


def _public(row: Row) -> EmotionReadingPublic:
    return EmotionReadingPublic(
        id=row["id"],
        agent=row["agent"],
        conversation_id=row["conversation_id"],
        channel_key=row["channel_key"],
        activation_id=row["activation_id"],
        at=row["at"],
        top=Emotion(row["top"]),
        probability=row["probability"],
        distribution={Emotion(k): float(v) for k, v in row["distribution"].items()},
    )


async def reading_for(lane: Lane, *, activation_id: str) -> EmotionReadingPublic | None:
    """The reading taken after ``activation_id``, if any."""
    row = await lane.first(_SELECT + "WHERE activation_id = %(id)s", {"id": activation_id})
    return _public(row) if row is not None else None


def _newest(*, conversation: bool, until: bool) -> LiteralString:
    """The statement for the newest readings, with only the filters asked for.

    One text per filter set, so each stays a plan PostgreSQL can cache with its index (an
    ``IS NULL OR`` filter would not).
    """
    where = _OF_AGENT + (_IN_CONVERSATION if conversation else "") + (_UNTIL if until else "")
    return _SELECT + where + _NEWEST_FIRST


async def latest_readings(
    lane: Lane,
    *,
    agent: str,
    limit: int,
    conversation_id: str | None = None,
    until: datetime | None = None,
) -> list[EmotionReadingPublic]:
    """The agent's newest readings (of one conversation, if given), oldest first.

    ``until`` leaves out readings taken after that moment (a state as of a time).
    """
    statement = _newest(conversation=conversation_id is not None, until=until is not None)
    params = {"agent": agent, "conversation_id": conversation_id, "until": until, "limit": limit}
    return [_public(row) for row in reversed(await lane.rows(statement, params))]


_HERE_AND_ANYWHERE = (
    "(" + _SELECT.replace(" FROM", ", 0 AS part FROM") + _OF_AGENT + _UNTIL + _NEWEST_FIRST + ")"
    " UNION ALL "
    "("
    + _SELECT.replace(" FROM", ", 1 AS part FROM")
    + _OF_AGENT
    + _IN_CONVERSATION
    + _UNTIL
    + _NEWEST_FIRST
    + ")"
)


async def latest_here_and_anywhere(
    lane: Lane, *, agent: str, conversation_id: str, limit: int, until: datetime
) -> tuple[list[EmotionReadingPublic], list[EmotionReadingPublic]]:
    """:func:`latest_readings` of the agent and of one conversation, in one statement.

    Returns:
        The agent's newest readings, then the conversation's, each oldest first.
    """
    params = {"agent": agent, "conversation_id": conversation_id, "until": until, "limit": limit}
    found: tuple[list[EmotionReadingPublic], list[EmotionReadingPublic]] = ([], [])
    for row in await lane.rows(_HERE_AND_ANYWHERE, params):
        found[row["part"]].append(_public(row))
    # A union keeps no order: each part oldest first, as latest_readings returns it.
    anywhere, here = (sorted(part, key=lambda r: (r.at, r.id)) for part in found)
    return anywhere, here
