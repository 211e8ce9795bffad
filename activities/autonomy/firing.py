"""Turning a schedule's firing into an impulse in the agent's inbox.

``claim`` decides (once per firing, by the impulse's event ID) whether the firing is delivered:
a reminder that was cancelled meanwhile, or an agent whose heartbeat was deleted (asleep), is
logged and skipped. ``deliver`` puts the impulse in ``agent/{handle}`` with signal-with-start,
idempotent by event ID. ``retire`` removes a fired one-shot reminder's schedule.
"""

from __future__ import annotations

import logging

from temporalio import activity
from temporalio.client import Client

from schemas.autonomy import (
    REFLECTION_CHANNEL,
    REMINDER_CHANNEL,
    SELF_SERVICE,
    ClaimFiringInput,
    DeliverImpulseInput,
    Firing,
    FiringKind,
    HeartbeatState,
    ReminderKind,
    ReminderStatus,
    RetireReminderInput,
)
from schemas.events import ChannelRef, InboundEvent, Speaker, Trigger
from schemas.records import Done
from store.db import Database
from store.queries.autonomy import claim_firing, get_heartbeat, get_reminder, save_reminder
from store.tables.columns import utcnow
from temporal import inbox, schedules_autonomy

log = logging.getLogger(__name__)

INNER_VOICE = Speaker(speaker_id="self", display_name="Inner voice")
"""Who speaks a self-initiated impulse: the agent itself, on its own channel."""

HEARTBEAT_TEXT = (
    "Heartbeat. Look back over what has happened lately, weigh the self-assessment below, "
    "then act on it with your tools: update or retire goals, pursue an open goal, set a "
    "reminder, or message someone. If nothing needs doing, say so in a sentence."
)


def self_channel(kind: FiringKind) -> ChannelRef:
    """The agent's own channel for this kind of firing."""
    name = REFLECTION_CHANNEL if kind is FiringKind.HEARTBEAT else REMINDER_CHANNEL
    return ChannelRef(service=SELF_SERVICE, channel=name)


class FiringActivities:
    """What schedule-started workflows need: the store and a Temporal client."""

    def __init__(self, db: Database, client: Client | None) -> None:
        self._db = db
        self._client = client

    @activity.defn(name="autonomy.claim_firing")
    async def claim(self, data: ClaimFiringInput) -> Firing:
        """Log the firing and say whether to deliver it (a retry claims the same firing)."""
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
                if reminder is None or reminder.status != ReminderStatus.ACTIVE.value:
                    reason = "the reminder is no longer active"
                else:
                    objective = reminder.objective
                    one_shot = reminder.kind == ReminderKind.ONE_SHOT.value
                    text = f"Reminder you set for yourself: {reminder.objective}"
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
    async def deliver(self, data: DeliverImpulseInput) -> Done:
        """Put the impulse in the agent's inbox (signal-with-start; the event ID dedupes)."""
        trigger = Trigger.HEARTBEAT if data.kind is FiringKind.HEARTBEAT else Trigger.REMINDER
        event = InboundEvent(
            event_id=data.event_id,
            channel=self_channel(data.kind),
            speaker=INNER_VOICE,
            text=data.text,
            trigger=trigger,
            sent_at=data.at,
        )
        await inbox.deliver(
            self._require_client(),
            handle=data.agent,
            event=event,
            task_queue=activity.info().task_queue,
        )
        return Done()

    @activity.defn(name="autonomy.retire_reminder")
    async def retire(self, data: RetireReminderInput) -> Done:
        """A one-shot reminder fired: mark it done, then delete its schedule."""
        async with self._db.session() as session:
            row = await get_reminder(session, reminder_id=data.reminder_id, agent=data.agent)
            if row is not None and row.status == ReminderStatus.ACTIVE.value:
                row.status, row.updated_at = ReminderStatus.DONE.value, utcnow()
                await save_reminder(session, row)
        await schedules_autonomy.remove(
            self._require_client(), schedules_autonomy.reminder_schedule_id(data.reminder_id)
        )
        return Done()
