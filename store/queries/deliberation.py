"""Parked conclusions (park, read the waiting ones, consume) and decisions to speak."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from sqlalchemy import update
from sqlalchemy.dialects.postgresql import insert
from sqlmodel import col, select
from sqlmodel.ext.asyncio.session import AsyncSession

from schemas.deliberation import Objection, SettleInput
from store.lane import Lane
from store.sql import insert_once_on
from store.tables.deliberation import ParkedConclusionRow, SpeakDecisionRow


async def park_conclusion(
    session: AsyncSession,
    *,
    parked_id: str,
    agent: str,
    channel_key: str,
    activation_id: str,
    conversation_id: str,
    candidate: str,
    objections: Sequence[Objection],
    refined: str | None,
    created_at: datetime,
    expires_at: datetime,
) -> bool:
    """Park a conclusion once per activation; returns ``False`` when a retry finds it parked."""
    result = await session.exec(
        insert(ParkedConclusionRow)
        .values(
            id=parked_id,
            agent=agent,
            channel_key=channel_key,
            activation_id=activation_id,
            conversation_id=conversation_id,
            candidate=candidate,
            objections=[o.model_dump(mode="json", exclude_none=True) for o in objections],
            refined=refined,
            created_at=created_at,
            expires_at=expires_at,
        )
        .on_conflict_do_nothing(index_elements=["activation_id"])
        .returning(ParkedConclusionRow.__table__.c.id)  # type: ignore[attr-defined]
    )
    inserted = result.scalar_one_or_none() is not None
    await session.commit()
    return inserted


# On the driver lane: every reply's prompt reads it (``activities.deliberation.parked_source``).
_WAITING = """
    SELECT id, agent, channel_key, activation_id, conversation_id, candidate, objections,
           refined, created_at, expires_at, consumed_at, consumed_by
      FROM parked_conclusions
     WHERE agent = %(agent)s AND channel_key = %(channel_key)s
       AND consumed_at IS NULL AND expires_at > %(now)s
     ORDER BY created_at DESC
     LIMIT %(limit)s
"""


async def waiting_conclusions(
    lane: Lane, *, agent: str, channel_key: str, now: datetime, limit: int
) -> list[ParkedConclusionRow]:
    """Unconsumed, unexpired conclusions for ``agent`` on ``channel_key``, newest first."""
    rows = await lane.rows(
        _WAITING, {"agent": agent, "channel_key": channel_key, "now": now, "limit": limit}
    )
    return [ParkedConclusionRow(**row) for row in rows]


async def conclusions_by_id(
    session: AsyncSession, *, ids: Sequence[str]
) -> list[ParkedConclusionRow]:
    """The parked conclusions with these IDs."""
    if not ids:
        return []
    rows = await session.exec(
        select(ParkedConclusionRow).where(col(ParkedConclusionRow.id).in_(list(ids)))
    )
    return list(rows)


async def consume_conclusions(
    session: AsyncSession, *, ids: Sequence[str], activation_id: str, at: datetime
) -> int:
    """Mark ``ids`` consumed by ``activation_id`` (idempotent); returns how many it marked."""
    if not ids:
        return 0
    connection = await session.connection()
    result = await connection.execute(
        update(ParkedConclusionRow)
        .where(
            col(ParkedConclusionRow.id).in_(list(ids)),
            col(ParkedConclusionRow.consumed_at).is_(None),
        )
        .values(consumed_at=at, consumed_by=activation_id)
    )
    await session.commit()
    return int(result.rowcount or 0)


async def record_decision(lane: Lane, *, settle: SettleInput) -> None:
    """Record why the activation spoke or stayed silent (idempotent per activation).

    One statement on the driver lane: every activation settles.
    """
    verdict = settle.verdict
    await insert_once_on(
        lane,
        SpeakDecisionRow.__table__,  # type: ignore[attr-defined]
        {
            "activation_id": settle.activation_id,
            "agent": settle.agent,
            "event_id": settle.event_id,
            "channel_key": settle.channel_key,
            "speak": verdict.speak if verdict is not None else settle.transmitted,
            "reason": verdict.reason if verdict is not None else "not recorded",
            "basis": verdict.basis.value if verdict is not None else "unknown",
            "transmitted": settle.transmitted,
            "mode": settle.mode.value if settle.mode is not None else None,
            "lenses": [lens.value for lens in settle.lenses],
            "objections": settle.objections,
            "refined": settle.refined,
            "decided_at": settle.at,
        },
        key=["activation_id"],
    )


async def get_decision(session: AsyncSession, *, activation_id: str) -> SpeakDecisionRow | None:
    """The decision recorded for one activation."""
    return await session.get(SpeakDecisionRow, activation_id)


async def parked_for(session: AsyncSession, *, activation_id: str) -> ParkedConclusionRow | None:
    """The conclusion parked by one activation's deferred critique, if any."""
    return (
        await session.exec(
            select(ParkedConclusionRow).where(ParkedConclusionRow.activation_id == activation_id)
        )
    ).first()
