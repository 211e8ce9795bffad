"""The heartbeat: bootstrapped exactly once per agent, deleted durably, restored explicitly.

The ``heartbeats`` row decides; the schedule ``heartbeat/{handle}`` follows it. Bootstrapping
inserts the row only if the agent never had one, so a second ``agent create``, a restart or a
redeploy can never bring back a heartbeat the operator deleted. :meth:`Heartbeats.reconcile`
(run by every worker at start) makes the schedules match the rows: active rows get their
schedule back (say, after a Temporal server lost its state), deleted rows lose theirs, and
agents created before heartbeats existed are bootstrapped, once. Waking (a restore, or a worker
start finding the agent awake) delivers the reminders that came due while it slept
(``activities.autonomy.held``).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import datetime

from temporalio.client import Client, Schedule

from activities.autonomy.held import HeldReminders
from contract import names
from schemas.autonomy import AutonomySettings, HeartbeatState, HeartbeatStatus
from schemas.settings import Settings
from store.db import Database
from store.queries.autonomy import (
    agents_without_heartbeat,
    all_heartbeats,
    bootstrap_heartbeat,
    get_heartbeat,
    heartbeat_record,
    set_heartbeat_state,
)
from store.tables.autonomy import HeartbeatRow
from store.tables.columns import utcnow
from temporal import schedules_autonomy as schedules

log = logging.getLogger(__name__)


class HeartbeatError(LookupError):
    """A heartbeat operation that cannot be done; the message says what to do."""


@dataclass(frozen=True)
class Reconciled:
    """What a reconciliation changed."""

    created: int = 0
    removed: int = 0
    bootstrapped: int = 0
    woken: int = 0
    """Reminders held while their agent slept, delivered now."""


class Heartbeats:
    """Bootstrap, delete, restore, trigger and inspect heartbeats."""

    def __init__(self, db: Database, client: Client, settings: AutonomySettings) -> None:
        self._db = db
        self._client = client
        self._settings = settings
        self._held = HeldReminders(db, client)

    def _schedule(self, row: HeartbeatRow) -> Schedule:
        return schedules.heartbeat_schedule(
            agent=row.agent,
            interval_minutes=row.interval_minutes,
            jitter_minutes=self._settings.heartbeat_jitter_minutes,
            task_queue=row.task_queue,
            # Beats keep the phase of the latest start (a restore starts the count afresh).
            started_at=row.restored_at or row.bootstrapped_at,
        )

    async def bootstrap(self, *, agent: str, task_queue: str, now: datetime) -> bool:
        """Start the agent's heartbeat if it never had one; returns whether it did now."""
        async with self._db.session() as session:
            fresh = await bootstrap_heartbeat(
                session,
                agent=agent,
                interval_minutes=self._settings.heartbeat_interval_minutes,
                task_queue=task_queue,
                at=now,
            )
            row = await get_heartbeat(session, agent=agent)
        if fresh and row is not None:
            await schedules.ensure(
                self._client, names.heartbeat_schedule_id(agent), self._schedule(row)
            )
        return fresh

    async def delete(self, *, agent: str, task_queue: str, now: datetime) -> HeartbeatStatus:
        """Put the agent to sleep: the row says deleted first, then the schedule goes."""
        async with self._db.session() as session:
            # A never-bootstrapped agent is recorded as deleted, so no backfill starts one.
            await bootstrap_heartbeat(
                session,
                agent=agent,
                interval_minutes=self._settings.heartbeat_interval_minutes,
                task_queue=task_queue,
                at=now,
            )
            await set_heartbeat_state(session, agent=agent, state=HeartbeatState.DELETED, at=now)
        await schedules.remove(self._client, names.heartbeat_schedule_id(agent))
        return await self.status(agent=agent)

    async def restore(self, *, agent: str, task_queue: str, now: datetime) -> HeartbeatStatus:
        """Wake the agent's idle cognition again (also starts a never-bootstrapped one).

        The reminders that came due while it slept are delivered now, once each.
        """
        async with self._db.session() as session:
            await bootstrap_heartbeat(
                session,
                agent=agent,
                interval_minutes=self._settings.heartbeat_interval_minutes,
                task_queue=task_queue,
                at=now,
            )
            row = await set_heartbeat_state(
                session, agent=agent, state=HeartbeatState.ACTIVE, at=now
            )
        assert row is not None
        await schedules.replace(
            self._client, names.heartbeat_schedule_id(agent), self._schedule(row)
        )
        await self._held.deliver(agent=agent)
        return await self.status(agent=agent)

    async def trigger(self, *, agent: str) -> None:
        """Beat now, outside the schedule.

        Raises:
            HeartbeatError: The heartbeat is deleted or was never started.
        """
        async with self._db.session() as session:
            row = await get_heartbeat(session, agent=agent)
        if row is None:
            raise HeartbeatError(f"{agent} has no heartbeat: `persyn heartbeat restore` starts one")
        if row.state == HeartbeatState.DELETED.value:
            raise HeartbeatError(
                f"{agent}'s heartbeat is deleted (asleep): `persyn heartbeat restore` wakes it"
            )
        schedule_id = names.heartbeat_schedule_id(agent)
        await schedules.ensure(self._client, schedule_id, self._schedule(row))
        await self._client.get_schedule_handle(schedule_id).trigger()

    async def status(self, *, agent: str) -> HeartbeatStatus:
        """The durable record and the schedule's state."""
        async with self._db.session() as session:
            row = await get_heartbeat(session, agent=agent)
        description = await schedules.describe(self._client, names.heartbeat_schedule_id(agent))
        return HeartbeatStatus(
            record=heartbeat_record(row) if row else None,
            scheduled=description is not None,
            paused=bool(description and description.schedule.state.paused),
            next_fire_at=schedules.next_fire(description),
            recent_fires=[a.scheduled_at for a in description.info.recent_actions]
            if description
            else [],
            held_reminders=await self._held.count(agent=agent),
        )

    async def reconcile(self, *, task_queue: str, now: datetime) -> Reconciled:
        """Make every schedule match its row; bootstrap agents that never had a heartbeat."""
        created = removed = bootstrapped = woken = 0
        async with self._db.session() as session:
            missing = await agents_without_heartbeat(session)
        for agent in missing:
            bootstrapped += int(await self.bootstrap(agent=agent, task_queue=task_queue, now=now))
        async with self._db.session() as session:
            rows = await all_heartbeats(session)
        for row in rows:
            schedule_id = names.heartbeat_schedule_id(row.agent)
            if row.state == HeartbeatState.ACTIVE.value:
                created += int(
                    await schedules.ensure(self._client, schedule_id, self._schedule(row))
                )
                async with self._db.session() as session:
                    again = await get_heartbeat(session, agent=row.agent)
                if again is None or again.state != HeartbeatState.DELETED.value:
                    # Awake: deliver what a restore cut short, or a firing held as it woke.
                    woken += len(await self._held.deliver(agent=row.agent))
                    continue  # still active; a delete that raced us is undone just below
            removed += int(await schedules.remove(self._client, schedule_id))
        if created or removed or bootstrapped or woken:
            log.info(
                "heartbeats reconciled: %d bootstrapped, %d schedules restored, %d removed, "
                "%d held reminders delivered",
                bootstrapped,
                created,
                removed,
                woken,
            )
        return Reconciled(created=created, removed=removed, bootstrapped=bootstrapped, woken=woken)


async def reconcile_heartbeats(client: Client, settings: Settings) -> Reconciled | None:
    """Run :meth:`Heartbeats.reconcile` for a starting worker; failures are logged, not raised.

    A worker must serve its task queue even if this bookkeeping cannot run right now; the next
    worker start (or an operator's ``persyn heartbeat restore``) catches up.
    """
    db = Database(settings.database_dsn())
    try:
        heartbeats = Heartbeats(db, client, settings.autonomy)
        return await heartbeats.reconcile(task_queue=settings.task_queue, now=utcnow())
    except Exception:
        log.warning("heartbeat schedules not reconciled", exc_info=True)
        return None
    finally:
        await db.aclose()
