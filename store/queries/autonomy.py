"""Heartbeats, reminders and the autonomy log: the durable intent behind Temporal Schedules."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from sqlalchemy import func, or_, update
from sqlalchemy.dialects.postgresql import insert
from sqlmodel import col, select
from sqlmodel.ext.asyncio.session import AsyncSession

from schemas.autonomy import (
    DORMANT_REASON,
    AutonomyEntry,
    FiringKind,
    HeartbeatRecord,
    HeartbeatState,
    Recurrence,
    ReminderKind,
    ReminderPublic,
    ReminderStatus,
)
from store.lane import Lane
from store.queries.tool_calls import calls_of
from store.tables.agents import Agent
from store.tables.autonomy import AutonomyLogRow, HeartbeatRow, ReminderRow
from store.tables.runtime import ActivationRow

# -- heartbeats -----------------------------------------------------------------------------------


def heartbeat_record(row: HeartbeatRow) -> HeartbeatRecord:
    """The wire form of a heartbeat row."""
    return HeartbeatRecord(
        agent=row.agent,
        state=HeartbeatState(row.state),
        interval_minutes=row.interval_minutes,
        bootstrapped_at=row.bootstrapped_at,
        deleted_at=row.deleted_at,
        restored_at=row.restored_at,
    )


async def bootstrap_heartbeat(
    session: AsyncSession, *, agent: str, interval_minutes: float, task_queue: str, at: datetime
) -> bool:
    """Record the heartbeat's bootstrap; ``False`` if it was bootstrapped before (ever)."""
    result = await session.exec(
        insert(HeartbeatRow)
        .values(
            agent=agent,
            state=HeartbeatState.ACTIVE.value,
            interval_minutes=interval_minutes,
            task_queue=task_queue,
            bootstrapped_at=at,
            updated_at=at,
        )
        .on_conflict_do_nothing(index_elements=["agent"])
        .returning(HeartbeatRow.__table__.c.agent)  # type: ignore[attr-defined]
    )
    inserted = result.scalar_one_or_none() is not None
    await session.commit()
    return inserted


async def get_heartbeat(session: AsyncSession, *, agent: str) -> HeartbeatRow | None:
    """The agent's heartbeat row."""
    return await session.get(HeartbeatRow, agent)


async def set_heartbeat_state(
    session: AsyncSession, *, agent: str, state: HeartbeatState, at: datetime
) -> HeartbeatRow | None:
    """Mark the heartbeat deleted or restored; ``None`` if it was never bootstrapped."""
    row = await session.get(HeartbeatRow, agent)
    if row is None:
        return None
    row.state = state.value
    row.updated_at = at
    if state is HeartbeatState.DELETED:
        row.deleted_at = at
    else:
        row.restored_at = at
    session.add(row)
    await session.commit()
    await session.refresh(row)
    return row


async def all_heartbeats(session: AsyncSession) -> list[HeartbeatRow]:
    """Every heartbeat row (for reconciling schedules at start-up)."""
    return list(await session.exec(select(HeartbeatRow)))


async def agents_without_heartbeat(session: AsyncSession) -> list[str]:
    """Agents whose heartbeat was never bootstrapped (created before heartbeats existed)."""
    rows = await session.exec(
        select(Agent.handle).where(col(Agent.handle).not_in(select(HeartbeatRow.agent)))
    )
    return list(rows)


# -- reminders ------------------------------------------------------------------------------------


def reminder_public(row: ReminderRow, next_fire_at: datetime | None = None) -> ReminderPublic:
    """The wire form of a reminder row."""
    recurrence = None
    if row.kind == ReminderKind.RECURRING.value:
        recurrence = Recurrence(
            every_minutes=row.every_minutes, cron=row.cron, timezone=row.timezone
        )
    return ReminderPublic(
        reminder_id=row.id,
        agent=row.agent,
        objective=row.objective,
        kind=ReminderKind(row.kind),
        status=ReminderStatus(row.status),
        at=row.at,
        recurrence=recurrence,
        created_at=row.created_at,
        updated_at=row.updated_at,
        fired=row.fired,
        last_fired_at=row.last_fired_at,
        next_fire_at=next_fire_at,
        for_person=row.for_person,
        for_channel=row.for_channel,
    )


async def count_active_reminders(session: AsyncSession, *, agent: str) -> int:
    """How many reminders the agent has active."""
    result = await session.exec(
        select(func.count())
        .select_from(ReminderRow)
        .where(ReminderRow.agent == agent, ReminderRow.status == ReminderStatus.ACTIVE.value)
    )
    return int(result.one())


async def get_reminder(
    session: AsyncSession, *, reminder_id: str, agent: str | None = None
) -> ReminderRow | None:
    """A reminder; with ``agent``, only if that agent owns it."""
    row = await session.get(ReminderRow, reminder_id)
    if row is None or (agent is not None and row.agent != agent):
        return None
    return row


async def list_reminders(
    session: AsyncSession, *, agent: str | None = None, statuses: Sequence[ReminderStatus] = ()
) -> list[ReminderRow]:
    """Reminders, oldest first, filtered by agent and status."""
    query = select(ReminderRow)
    if agent is not None:
        query = query.where(ReminderRow.agent == agent)
    if statuses:
        query = query.where(col(ReminderRow.status).in_([s.value for s in statuses]))
    return list(await session.exec(query.order_by(col(ReminderRow.id))))


async def save_reminder(session: AsyncSession, row: ReminderRow) -> ReminderRow:
    """Insert or update a reminder row."""
    merged = await session.merge(row)
    await session.commit()
    return merged


# -- the autonomy log -----------------------------------------------------------------------------


async def claim_firing(
    session: AsyncSession,
    *,
    event_id: str,
    agent: str,
    kind: FiringKind,
    reminder_id: str | None,
    objective: str | None,
    delivered: bool,
    reason: str | None,
    at: datetime,
) -> bool:
    """Log a firing once by its event ID; ``False`` if a retry finds it already logged."""
    result = await session.exec(
        insert(AutonomyLogRow)
        .values(
            event_id=event_id,
            agent=agent,
            kind=kind.value,
            reminder_id=reminder_id,
            objective=objective,
            delivered=delivered,
            reason=reason,
            fired_at=at,
        )
        .on_conflict_do_nothing(index_elements=["event_id"])
        .returning(AutonomyLogRow.__table__.c.event_id)  # type: ignore[attr-defined]
    )
    fresh = result.scalar_one_or_none() is not None
    if fresh and reminder_id is not None and delivered:
        await session.exec(
            update(ReminderRow)
            .where(col(ReminderRow.id) == reminder_id)
            .values(fired=ReminderRow.fired + 1, last_fired_at=at)
        )
    await session.commit()
    return fresh


async def fired_reminder(session: AsyncSession, *, event_id: str) -> ReminderRow | None:
    """The reminder whose firing the autonomy log holds under ``event_id`` (``None``: none)."""
    firing = await session.get(AutonomyLogRow, event_id)
    if firing is None or firing.reminder_id is None:
        return None
    return await session.get(ReminderRow, firing.reminder_id)


async def hold_reminder(session: AsyncSession, *, reminder_id: str, at: datetime) -> None:
    """A one-shot reminder came due while its agent slept: keep it, undelivered, until it wakes."""
    await session.exec(
        update(ReminderRow)
        .where(
            col(ReminderRow.id) == reminder_id,
            col(ReminderRow.status) == ReminderStatus.ACTIVE.value,
        )
        .values(status=ReminderStatus.DUE_WHILE_DORMANT.value, updated_at=at)
    )
    await session.commit()


async def held_firings(
    session: AsyncSession, *, agent: str, reminder_id: str | None = None
) -> dict[str, AutonomyLogRow]:
    """Reminders that came due while the agent slept and were not delivered since.

    Returns:
        Each such reminder's ID with its earliest held firing. A reminder is held while it is
        still wanted (active, or a one-shot held as ``due_while_dormant``) and has a firing
        logged with :data:`DORMANT_REASON` after its last delivered one.
    """
    query = (
        select(AutonomyLogRow, ReminderRow)
        .join(ReminderRow, col(ReminderRow.id) == col(AutonomyLogRow.reminder_id))
        .where(
            AutonomyLogRow.agent == agent,
            col(AutonomyLogRow.delivered).is_(False),
            AutonomyLogRow.reason == DORMANT_REASON,
            col(ReminderRow.status).in_(
                [ReminderStatus.ACTIVE.value, ReminderStatus.DUE_WHILE_DORMANT.value]
            ),
            or_(
                col(ReminderRow.last_fired_at).is_(None),
                col(AutonomyLogRow.fired_at) > col(ReminderRow.last_fired_at),
            ),
        )
        .order_by(col(AutonomyLogRow.fired_at))
    )
    if reminder_id is not None:
        query = query.where(col(ReminderRow.id) == reminder_id)
    held: dict[str, AutonomyLogRow] = {}
    for firing, reminder in await session.exec(query):
        held.setdefault(reminder.id, firing)
    return held


async def get_firing(session: AsyncSession, *, event_id: str) -> AutonomyLogRow | None:
    """One logged firing."""
    return await session.get(AutonomyLogRow, event_id)


async def save_assessment(
    session: AsyncSession, *, event_id: str, template: str, assessment: str
) -> None:
    """Attach a heartbeat's self-assessment to its logged firing."""
    await session.exec(
        update(AutonomyLogRow)
        .where(col(AutonomyLogRow.event_id) == event_id)
        .values(template=template, assessment=assessment)
    )
    await session.commit()


async def recent_autonomy(
    session: AsyncSession,
    *,
    agent: str,
    limit: int = 10,
    kind: FiringKind | None = None,
    reminder_id: str | None = None,
    objective: str | None = None,
) -> list[AutonomyEntry]:
    """The latest delivered firings, newest first, with what each activation said and did."""
    query = select(AutonomyLogRow).where(
        AutonomyLogRow.agent == agent, col(AutonomyLogRow.delivered).is_(True)
    )
    if kind is not None:
        query = query.where(AutonomyLogRow.kind == kind.value)
    if reminder_id is not None:
        query = query.where(AutonomyLogRow.reminder_id == reminder_id)
    if objective is not None:
        query = query.where(AutonomyLogRow.objective == objective)
    logs = list(
        await session.exec(query.order_by(col(AutonomyLogRow.fired_at).desc()).limit(limit))
    )
    events = [log.event_id for log in logs]
    activations = {
        row.event_id: row
        for row in await session.exec(
            select(ActivationRow).where(col(ActivationRow.event_id).in_(events))
        )
    }
    calls = await calls_of(session, activation_ids=[a.id for a in activations.values()])
    tools_by_activation: dict[str, list[str]] = {}
    for call in calls:
        mark = "" if not call.is_error else " (failed)"
        tools_by_activation.setdefault(call.activation_id, []).append(f"{call.name}{mark}")
    entries = []
    for log in logs:
        activation = activations.get(log.event_id)
        entries.append(
            AutonomyEntry(
                kind=FiringKind(log.kind),
                fired_at=log.fired_at,
                event_id=log.event_id,
                reminder_id=log.reminder_id,
                objective=log.objective,
                outcome=activation.outcome if activation else "pending",
                said=activation.text if activation else None,
                tools=tools_by_activation.get(activation.id, []) if activation else [],
                assessment=log.assessment,
            )
        )
    return entries


# The context source's copy of :func:`recent_autonomy`, on the driver lane: two statements (the
# firings, then their activations with the tools each called) in place of the session's three.
_RECENT_FIRINGS = """
    SELECT kind, fired_at, event_id, reminder_id, objective, assessment
      FROM autonomy_log
     WHERE agent = %(agent)s AND delivered IS true AND kind = %(kind)s
     ORDER BY fired_at DESC
     LIMIT %(limit)s::integer
"""
_FIRING_ACTIVATIONS = """
    SELECT a.event_id, a.outcome, a.text,
           ARRAY(SELECT c.name || CASE WHEN c.is_error THEN ' (failed)' ELSE '' END
                   FROM tool_calls AS c
                  WHERE c.activation_id = a.id
                  ORDER BY c.created_at, c.seq) AS tools
      FROM activations AS a
     WHERE a.event_id = ANY(%(events)s::varchar[])
"""


async def recent_autonomy_on(
    lane: Lane, *, agent: str, kind: FiringKind, limit: int = 10
) -> list[AutonomyEntry]:
    """:func:`recent_autonomy` of one kind on the driver lane, for the prompt's outcomes."""
    logs = await lane.rows(_RECENT_FIRINGS, {"agent": agent, "kind": kind.value, "limit": limit})
    if not logs:
        return []
    found = await lane.rows(_FIRING_ACTIVATIONS, {"events": [log["event_id"] for log in logs]})
    activations = {row["event_id"]: row for row in found}
    entries = []
    for log in logs:
        activation = activations.get(log["event_id"])
        entries.append(
            AutonomyEntry(
                kind=FiringKind(log["kind"]),
                fired_at=log["fired_at"],
                event_id=log["event_id"],
                reminder_id=log["reminder_id"],
                objective=log["objective"],
                outcome=activation["outcome"] if activation else "pending",
                said=activation["text"] if activation else None,
                tools=activation["tools"] if activation else [],
                assessment=log["assessment"],
            )
        )
    return entries
