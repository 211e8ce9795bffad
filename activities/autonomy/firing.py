"""Turning a schedule's firing into an impulse in the agent's inbox.

``claim`` decides (once per firing, by the impulse's event ID) whether the firing is delivered:
a reminder that was cancelled meanwhile is logged and skipped, and so is a heartbeat while the
agent sleeps (its heartbeat deleted). A reminder that comes due while the agent sleeps is held,
not lost: its firing is logged with :data:`DORMANT_REASON`, a one-shot reminder is kept as
``due_while_dormant`` instead of being retired, and the reminder is delivered when the agent
wakes (``activities.autonomy.held``), its impulse saying when it came due. ``deliver`` puts the
impulse in ``agent/{handle}`` through the internal ``impulse`` signal (signal-with-start,
idempotent by event ID); the agent builds the event on its own channel, so the trigger is never
a field a client could set. ``retire`` removes a fired one-shot reminder's schedule.
"""

from __future__ import annotations

import logging
from datetime import UTC

from sqlmodel.ext.asyncio.session import AsyncSession
from temporalio import activity
from temporalio.client import Client

from activities.autonomy.for_person import send_to_person
from schemas.autonomy import (
    DORMANT_REASON,
    ClaimFiringInput,
    DeliverImpulseInput,
    Firing,
    FiringKind,
    HeartbeatState,
    ReminderKind,
    ReminderStatus,
    RetireReminderInput,
    impulse_channel,
)
from schemas.delivery import DeliverySettings
from schemas.events import ChannelRef, ImpulseInput, Trigger
from schemas.records import Done
from store.db import Database
from store.queries.autonomy import (
    claim_firing,
    fired_reminder,
    get_heartbeat,
    get_reminder,
    held_firings,
    hold_reminder,
    save_reminder,
)
from store.tables.autonomy import ReminderRow
from store.tables.columns import utcnow
from temporal import inbox, schedules_autonomy

log = logging.getLogger(__name__)

HEARTBEAT_TEXT = (
    "Heartbeat. Look back over what has happened lately, weigh the self-assessment below, "
    "then act on it with your tools: update or retire goals, pursue an open goal, set a "
    "reminder, or message someone. If nothing needs doing, say so in a sentence."
)


_WANTED = (ReminderStatus.ACTIVE.value, ReminderStatus.DUE_WHILE_DORMANT.value)
"""Reminder states whose firing is still delivered: active, or held while the agent slept."""


async def _reminder_text(session: AsyncSession, reminder: ReminderRow) -> str:
    """The impulse's words: the objective, and when it came due if the agent slept through it."""
    held = (await held_firings(session, agent=reminder.agent, reminder_id=reminder.id)).get(
        reminder.id
    )
    if reminder.for_channel is not None:
        # Sent to the person by the platform (activities.autonomy.for_person): not again.
        return (
            f"Reminder someone asked you for, already sent to them on {reminder.for_channel} "
            f"(no need to send it again): {reminder.objective}"
        )
    if held is None:
        return f"Reminder you set for yourself: {reminder.objective}"
    when = held.fired_at.astimezone(UTC).strftime("%Y-%m-%d %H:%M UTC")
    return (
        f"Reminder you set for yourself (it came due at {when} while you were dormant): "
        f"{reminder.objective}"
    )


def trigger_of(kind: FiringKind) -> Trigger:
    """The trigger an impulse of this kind carries into its activation."""
    return Trigger.HEARTBEAT if kind is FiringKind.HEARTBEAT else Trigger.REMINDER


def self_channel(kind: FiringKind) -> ChannelRef:
    """The agent's own channel for this kind of firing."""
    return impulse_channel(trigger_of(kind))


class FiringActivities:
    """What schedule-started workflows need: the store and a Temporal client."""

    def __init__(
        self, db: Database, client: Client | None, delivery: DeliverySettings | None = None
    ) -> None:
        self._db = db
        self._client = client
        self._delivery = delivery or DeliverySettings()

    @activity.defn(name="autonomy.claim_firing")
    async def claim_firing(self, data: ClaimFiringInput) -> Firing:
        """Log the firing and say whether to deliver it (a retry claims the same firing).

        A reminder due while the agent sleeps is held (never retired undelivered); a one-shot
        held so is ``due_while_dormant`` until the agent wakes and it is delivered.
        """
        async with self._db.session() as session:
            heartbeat = await get_heartbeat(session, agent=data.agent)
            asleep = heartbeat is not None and heartbeat.state == HeartbeatState.DELETED.value
            text, reason, one_shot, objective = HEARTBEAT_TEXT, None, False, None
            if data.kind is FiringKind.REMINDER:
                reminder = (
                    await get_reminder(session, reminder_id=data.reminder_id, agent=data.agent)
                    if data.reminder_id
                    else None
                )
                if reminder is None or reminder.status not in _WANTED:
                    reason = "the reminder is no longer active"
                elif asleep:
                    reason, objective = DORMANT_REASON, reminder.objective
                else:
                    objective = reminder.objective
                    one_shot = reminder.kind == ReminderKind.ONE_SHOT.value
                    text = await _reminder_text(session, reminder)
            if reason is None and asleep:
                reason = "asleep: the heartbeat is deleted, so no autonomous activity"
            await claim_firing(
                session,
                event_id=data.event_id,
                agent=data.agent,
                kind=data.kind,
                reminder_id=data.reminder_id,
                objective=objective,
                delivered=reason is None,
                reason=reason,
                at=data.fired_at,
            )
            if reason == DORMANT_REASON and data.reminder_id is not None:
                await hold_reminder(session, reminder_id=data.reminder_id, at=data.fired_at)
        return Firing(
            deliver=reason is None,
            event_id=data.event_id,
            text=text,
            one_shot=one_shot,
            reason=reason,
        )

    def _require_client(self) -> Client:
        if self._client is None:
            raise RuntimeError("this worker has no Temporal client for autonomy activities")
        return self._client

    @activity.defn(name="autonomy.deliver_impulse")
    async def deliver_impulse(self, data: DeliverImpulseInput) -> Done:
        """Put the impulse in the agent's inbox (signal-with-start; the event ID dedupes).

        A reminder a person asked for is sent to them first, once (``for_person``).
        """
        if data.kind is FiringKind.REMINDER:
            async with self._db.autocommit() as session:
                reminder = await fired_reminder(session, event_id=data.event_id)
            if reminder is not None:
                await send_to_person(
                    self._db,
                    self._require_client(),
                    reminder,
                    event_id=data.event_id,
                    at=data.at,
                    settings=self._delivery,
                )
        impulse = ImpulseInput(
            event_id=data.event_id, trigger=trigger_of(data.kind), text=data.text, at=data.at
        )
        await inbox.impulse(
            self._require_client(),
            handle=data.agent,
            impulse=impulse,
            task_queue=activity.info().task_queue,
        )
        return Done()

    @activity.defn(name="autonomy.retire_reminder")
    async def retire_reminder(self, data: RetireReminderInput) -> Done:
        """A one-shot reminder fired: mark it done, then delete its schedule."""
        async with self._db.session() as session:
            row = await get_reminder(session, reminder_id=data.reminder_id, agent=data.agent)
            if row is not None and row.status in _WANTED:
                row.status, row.updated_at = ReminderStatus.DONE.value, utcnow()
                await save_reminder(session, row)
        await schedules_autonomy.remove(
            self._require_client(), schedules_autonomy.reminder_schedule_id(data.reminder_id)
        )
        return Done()
