"""Heartbeat and reminder schedules: IDs, specs, and idempotent create/replace/delete.

``heartbeat/{handle}`` fires ``HeartbeatWorkflow`` every interval counted from when the
heartbeat started (with jitter, overlaps skipped, missed beats not caught up in bulk);
``reminder/{ulid}`` fires ``ReminderWorkflow`` at an absolute time (once: one remaining action)
or on a recurrence (every N minutes, or cron).
Each firing's workflow ID is the schedule's ID plus the firing time, which Temporal appends.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from temporalio.client import (
    Client,
    Schedule,
    ScheduleActionStartWorkflow,
    ScheduleAlreadyRunningError,
    ScheduleCalendarSpec,
    ScheduleDescription,
    ScheduleIntervalSpec,
    ScheduleOverlapPolicy,
    SchedulePolicy,
    ScheduleRange,
    ScheduleSpec,
    ScheduleState,
    ScheduleUpdate,
    ScheduleUpdateInput,
)
from temporalio.service import RPCError, RPCStatusCode

from contract import names
from contract.policies import BACKGROUND
from schemas.autonomy import FiringInput, Recurrence
from schemas.ids import check_ulid


def reminder_schedule_id(reminder_id: str) -> str:
    """``reminder/{ulid}``; the ID must be a ULID, so no reminder ID can name another schedule.

    Raises:
        InvalidIdError: ``reminder_id`` is not a ULID.
    """
    return names.reminder_schedule_id(check_ulid(reminder_id, what="reminder id"))


def heartbeat_schedule(
    *,
    agent: str,
    interval_minutes: float,
    jitter_minutes: float,
    task_queue: str,
    started_at: datetime,
) -> Schedule:
    """The heartbeat's schedule: the first beat one interval after ``started_at``, not at once.

    Temporal counts intervals from the Unix epoch, so a bare hourly interval fires at the next
    full hour, perhaps a minute after the agent was created and before anyone spoke to it. The
    offset puts every beat in phase with ``started_at``, and ``start_at`` half an interval later
    skips the beat that would fall on ``started_at`` itself (half, not a whole one, so rounding
    at the boundary can never push the first beat a second interval away).
    """
    every = timedelta(minutes=interval_minutes)
    phase = timedelta(seconds=started_at.timestamp() % every.total_seconds())
    return Schedule(
        action=ScheduleActionStartWorkflow(
            names.HEARTBEAT_WORKFLOW,
            FiringInput(agent=agent),
            id=names.heartbeat_schedule_id(agent),
            task_queue=task_queue,
            typed_search_attributes=names.search_attributes(agent=agent, trigger="heartbeat"),
            priority=BACKGROUND,
            static_summary=f"heartbeat of {agent}: reflect, then act",
        ),
        spec=ScheduleSpec(
            intervals=[ScheduleIntervalSpec(every=every, offset=phase)],
            start_at=started_at + every / 2,
            jitter=timedelta(minutes=min(jitter_minutes, interval_minutes / 2)),
        ),
        # A beat that is still running, or one missed while the server was down, is skipped:
        # idle cognition has no backlog worth replaying.
        policy=SchedulePolicy(overlap=ScheduleOverlapPolicy.SKIP, catchup_window=every),
        state=ScheduleState(note=f"the idle cognition of agent {agent}"),
    )


def _at(when: datetime) -> ScheduleCalendarSpec:
    return ScheduleCalendarSpec(
        second=[ScheduleRange(when.second)],
        minute=[ScheduleRange(when.minute)],
        hour=[ScheduleRange(when.hour)],
        day_of_month=[ScheduleRange(when.day)],
        month=[ScheduleRange(when.month)],
        year=[ScheduleRange(when.year)],
        day_of_week=[ScheduleRange(0, 6)],
    )


def reminder_schedule(
    *,
    agent: str,
    reminder_id: str,
    objective: str,
    task_queue: str,
    at: datetime | None = None,
    recurrence: Recurrence | None = None,
    last: bool = False,
) -> Schedule:
    """A reminder's schedule: once at ``at`` (UTC), or on ``recurrence`` (from ``at`` if given).

    ``last`` limits a recurring schedule to its next firing (the reminder was made one-shot).
    """
    if recurrence is None:
        if at is None:
            raise ValueError("a reminder needs a time or a recurrence")
        spec = ScheduleSpec(calendars=[_at(at)], time_zone_name="UTC")
        state = ScheduleState(limited_actions=True, remaining_actions=1)
    else:
        spec = ScheduleSpec(
            intervals=(
                [ScheduleIntervalSpec(every=timedelta(minutes=recurrence.every_minutes))]
                if recurrence.every_minutes
                else []
            ),
            cron_expressions=[recurrence.cron] if recurrence.cron else [],
            start_at=at,
            time_zone_name=recurrence.timezone,
        )
        state = ScheduleState(limited_actions=last, remaining_actions=1 if last else 0)
    state.note = objective[:200]
    return Schedule(
        action=ScheduleActionStartWorkflow(
            names.REMINDER_WORKFLOW,
            FiringInput(agent=agent, reminder_id=reminder_id),
            id=reminder_schedule_id(reminder_id),
            task_queue=task_queue,
            typed_search_attributes=names.search_attributes(agent=agent, trigger="reminder"),
            static_summary=f"reminder of {agent}: {objective[:120]}",
        ),
        spec=spec,
        policy=SchedulePolicy(overlap=ScheduleOverlapPolicy.SKIP),
        state=state,
    )


def _not_found(err: RPCError) -> bool:
    return err.status == RPCStatusCode.NOT_FOUND


async def ensure(client: Client, schedule_id: str, schedule: Schedule) -> bool:
    """Create the schedule unless it exists; returns whether it was created."""
    try:
        await client.create_schedule(schedule_id, schedule)
    except ScheduleAlreadyRunningError:
        return False
    return True


async def replace(client: Client, schedule_id: str, schedule: Schedule) -> None:
    """Replace an existing schedule's spec, action and state, or create it if it is gone."""

    def updater(_: ScheduleUpdateInput) -> ScheduleUpdate:
        return ScheduleUpdate(schedule=schedule)

    try:
        await client.get_schedule_handle(schedule_id).update(updater)
    except RPCError as err:
        if not _not_found(err):
            raise
        await ensure(client, schedule_id, schedule)


async def remove(client: Client, schedule_id: str) -> bool:
    """Delete the schedule; returns ``False`` if there was none."""
    try:
        await client.get_schedule_handle(schedule_id).delete()
    except RPCError as err:
        if _not_found(err):
            return False
        raise
    return True


async def describe(client: Client, schedule_id: str) -> ScheduleDescription | None:
    """The schedule's description, or ``None`` if there is none."""
    try:
        return await client.get_schedule_handle(schedule_id).describe()
    except RPCError as err:
        if _not_found(err):
            return None
        raise


def next_fire(description: ScheduleDescription | None) -> datetime | None:
    """When the schedule fires next (``None``: never again, or no schedule)."""
    if description is None:
        return None
    state = description.schedule.state
    if state.paused or (state.limited_actions and state.remaining_actions <= 0):
        return None
    times = description.info.next_action_times
    return times[0] if times else None
