"""Reminders: the agent's own, kept as a PostgreSQL record plus a Temporal Schedule.

The record is the intent and is written first; the schedule ``reminder/{id}`` follows it. An
agent can touch only reminders whose record names it, and a reminder's ID must be a ULID, so
no argument can reach the heartbeat's schedule or another agent's. The operator (``agent=None``)
may list, show and cancel any reminder.
"""

from __future__ import annotations

from datetime import datetime

from temporalio.client import Client, Schedule

from activities.scheduling.recurrence import (
    RecurrenceError,
    check_at,
    check_cron,
    check_every,
    zone,
)
from schemas.autonomy import (
    AutonomySettings,
    Recurrence,
    ReminderKind,
    ReminderPublic,
    ReminderStatus,
)
from schemas.ids import InvalidIdError, check_ulid, new_ulid
from schemas.text import InvalidTextError, clean_text
from store.db import Database
from store.queries.autonomy import (
    count_active_reminders,
    get_reminder,
    list_reminders,
    reminder_public,
    save_reminder,
)
from store.tables.autonomy import ReminderRow
from temporal import schedules_autonomy as schedules

MAX_OBJECTIVE_CHARS = 2000


class ReminderError(ValueError):
    """A reminder request that cannot be met; the message says what to change."""


def objective_text(text: str) -> str:
    """A validated objective.

    Raises:
        ReminderError: Empty, too long or with forbidden characters.
    """
    try:
        return clean_text(text, what="objective", max_chars=MAX_OBJECTIVE_CHARS)
    except InvalidTextError as err:
        raise ReminderError(str(err)) from None


class Reminders:
    """Create, edit, cancel and read reminders."""

    def __init__(self, db: Database, client: Client, settings: AutonomySettings) -> None:
        self._db = db
        self._client = client
        self._settings = settings

    def _recurrence(
        self, every_minutes: float | None, cron: str | None, timezone: str
    ) -> Recurrence | None:
        if every_minutes is not None and cron is not None:
            raise ReminderError("give either every_minutes or cron, not both")
        minimum = self._settings.reminder_min_interval_minutes
        zone(timezone)
        if every_minutes is not None:
            return Recurrence(
                every_minutes=check_every(every_minutes, min_minutes=minimum), timezone=timezone
            )
        if cron is not None:
            return Recurrence(cron=check_cron(cron, min_minutes=minimum), timezone=timezone)
        return None

    async def _row(self, reminder_id: str, agent: str | None) -> ReminderRow:
        try:
            reminder_id = check_ulid(reminder_id, what="reminder id")
        except InvalidIdError:
            raise ReminderError(
                f"{reminder_id!r} is not a reminder ID: use an ID from list_reminders"
            ) from None
        async with self._db.session() as session:
            row = await get_reminder(session, reminder_id=reminder_id, agent=agent)
        if row is None:
            raise ReminderError(f"there is no reminder {reminder_id} of yours")
        return row

    def _schedule_of(self, row: ReminderRow, *, last: bool = False) -> Schedule:
        recurrence = None
        if row.kind == ReminderKind.RECURRING.value:
            recurrence = Recurrence(
                every_minutes=row.every_minutes, cron=row.cron, timezone=row.timezone
            )
        return schedules.reminder_schedule(
            agent=row.agent,
            reminder_id=row.id,
            objective=row.objective,
            task_queue=row.task_queue,
            at=row.at,
            recurrence=recurrence,
            last=last,
        )

    async def create(
        self,
        *,
        agent: str,
        objective: str,
        now: datetime,
        task_queue: str,
        at: datetime | None = None,
        every_minutes: float | None = None,
        cron: str | None = None,
        timezone: str = "UTC",
        created_in: str | None = None,
        reminder_id: str | None = None,
        for_person: str | None = None,
        for_channel: str | None = None,
    ) -> ReminderPublic:
        """A new active reminder with its schedule.

        ``reminder_id`` makes the call idempotent: a reminder of that ID already recorded is
        returned as it is (its schedule made sure of). ``for_person`` and ``for_channel`` name
        who it is sent to, and where, when it fires (a reminder a person asked for).

        Raises:
            ReminderError: Bad timing, empty objective, or too many reminders.
        """
        if reminder_id is not None:
            async with self._db.session() as session:
                existing = await get_reminder(session, reminder_id=reminder_id, agent=agent)
            if existing is not None:
                if existing.status == ReminderStatus.ACTIVE.value:
                    await schedules.ensure(
                        self._client,
                        schedules.reminder_schedule_id(existing.id),
                        self._schedule_of(existing),
                    )
                return await self._public(existing)
        text = objective_text(objective)
        try:
            recurrence = self._recurrence(every_minutes, cron, timezone)
            horizon = self._settings.reminder_max_horizon_days
            when = check_at(at, now=now, horizon_days=horizon, timezone=timezone) if at else None
        except RecurrenceError as err:
            raise ReminderError(str(err)) from None
        if recurrence is None and when is None:
            raise ReminderError("say when: give 'at' (a time), 'every_minutes' or 'cron'")
        async with self._db.session() as session:
            if await count_active_reminders(session, agent=agent) >= self._settings.max_reminders:
                raise ReminderError(
                    f"you already have {self._settings.max_reminders} active reminders: "
                    "cancel some first"
                )
            row = await save_reminder(
                session,
                ReminderRow(
                    id=reminder_id or new_ulid(),
                    agent=agent,
                    objective=text,
                    kind=(ReminderKind.RECURRING if recurrence else ReminderKind.ONE_SHOT).value,
                    status=ReminderStatus.ACTIVE.value,
                    at=when,
                    every_minutes=recurrence.every_minutes if recurrence else None,
                    cron=recurrence.cron if recurrence else None,
                    timezone=timezone,
                    task_queue=task_queue,
                    created_in=created_in,
                    for_person=for_person,
                    for_channel=for_channel,
                    created_at=now,
                    updated_at=now,
                ),
            )
        try:
            await schedules.ensure(
                self._client, schedules.reminder_schedule_id(row.id), self._schedule_of(row)
            )
        except Exception:
            async with self._db.session() as session:
                row.status = ReminderStatus.CANCELLED.value
                await save_reminder(session, row)
            raise
        return await self._public(row)

    async def edit(
        self,
        *,
        agent: str,
        reminder_id: str,
        now: datetime,
        objective: str | None = None,
        at: datetime | None = None,
        every_minutes: float | None = None,
        cron: str | None = None,
        one_shot: bool = False,
    ) -> ReminderPublic:
        """Change the objective or the timing; ``one_shot`` drops the recurrence.

        With ``one_shot`` and no ``at``, the reminder's next firing becomes its last.

        Raises:
            ReminderError: Not the agent's active reminder, or bad timing.
        """
        row = await self._row(reminder_id, agent)
        if row.status != ReminderStatus.ACTIVE.value:
            raise ReminderError(f"reminder {row.id} is {row.status}: it can no longer change")
        if objective is not None:
            row.objective = objective_text(objective)
        last = False
        try:
            if at is not None:
                row.at = check_at(
                    at,
                    now=now,
                    horizon_days=self._settings.reminder_max_horizon_days,
                    timezone=row.timezone,
                )
            recurrence = self._recurrence(every_minutes, cron, row.timezone)
        except RecurrenceError as err:
            raise ReminderError(str(err)) from None
        if one_shot and recurrence is not None:
            raise ReminderError("one_shot drops the recurrence: do not give a new one with it")
        if recurrence is not None:
            row.kind = ReminderKind.RECURRING.value
            row.every_minutes, row.cron = recurrence.every_minutes, recurrence.cron
        elif one_shot and row.kind == ReminderKind.RECURRING.value:
            if at is None:
                last = True  # keep the recurrence for exactly one more firing
            else:
                row.kind, row.every_minutes, row.cron = ReminderKind.ONE_SHOT.value, None, None
        row.updated_at = now
        schedule = self._schedule_of(row, last=last)
        if last:
            row.kind, row.every_minutes, row.cron = ReminderKind.ONE_SHOT.value, None, None
            row.at = schedules.next_fire(
                await schedules.describe(self._client, schedules.reminder_schedule_id(row.id))
            )
        async with self._db.session() as session:
            row = await save_reminder(session, row)
        await schedules.replace(self._client, schedules.reminder_schedule_id(row.id), schedule)
        return await self._public(row)

    async def cancel(self, *, agent: str | None, reminder_id: str, now: datetime) -> ReminderPublic:
        """Cancel a reminder and delete its schedule (the operator passes ``agent=None``).

        Raises:
            ReminderError: No such reminder (of this agent).
        """
        row = await self._row(reminder_id, agent)
        # A reminder held while the agent slept is still wanted, so it can be cancelled too.
        if row.status in (ReminderStatus.ACTIVE.value, ReminderStatus.DUE_WHILE_DORMANT.value):
            row.status, row.updated_at = ReminderStatus.CANCELLED.value, now
            async with self._db.session() as session:
                row = await save_reminder(session, row)
        await schedules.remove(self._client, schedules.reminder_schedule_id(row.id))
        return await self._public(row)

    async def show(self, *, agent: str | None, reminder_id: str) -> ReminderPublic:
        """One reminder with its next firing.

        Raises:
            ReminderError: No such reminder (of this agent).
        """
        return await self._public(await self._row(reminder_id, agent))

    async def list(
        self, *, agent: str | None, include_finished: bool = False
    ) -> list[ReminderPublic]:
        """The reminders (active or held ones unless ``include_finished``), oldest first."""
        pending = (ReminderStatus.ACTIVE, ReminderStatus.DUE_WHILE_DORMANT)
        statuses = () if include_finished else pending
        async with self._db.session() as session:
            rows = await list_reminders(session, agent=agent, statuses=statuses)
        return [await self._public(row) for row in rows]

    async def _public(self, row: ReminderRow) -> ReminderPublic:
        if row.status != ReminderStatus.ACTIVE.value:
            return reminder_public(row)
        description = await schedules.describe(self._client, schedules.reminder_schedule_id(row.id))
        return reminder_public(row, schedules.next_fire(description))
