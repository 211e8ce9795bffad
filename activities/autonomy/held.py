"""Waking: reminders that came due while the agent slept are delivered when it wakes.

Dormant means quiet, not forgetful. While the heartbeat is deleted a reminder's firing is held
(``activities.autonomy.firing``); when the heartbeat is restored, and at every worker start for
agents that are awake (a restore cut short, or a firing held just as the agent woke), each held
reminder gets one ``ReminderWorkflow`` run started as its schedule would start it. That run
claims the firing like any other (now awake, it is delivered), tells the agent when the reminder
came due, and retires a one-shot reminder. A recurring reminder that came due several times
while the agent slept is delivered once.
"""

from __future__ import annotations

import contextlib
import logging

from temporalio.client import Client
from temporalio.common import WorkflowIDReusePolicy
from temporalio.exceptions import WorkflowAlreadyStartedError

from contract import names
from schemas.autonomy import FiringInput
from store.db import Database
from store.queries.autonomy import get_reminder, held_firings

log = logging.getLogger(__name__)


def wake_run_id(reminder_id: str, held_event_id: str) -> str:
    """The catch-up run's ID: one per held firing, so no two wakings both deliver it."""
    return f"{names.reminder_schedule_id(reminder_id)}-woke-{held_event_id}"


class HeldReminders:
    """Counts and delivers an agent's reminders held while it slept."""

    def __init__(self, db: Database, client: Client) -> None:
        self._db = db
        self._client = client

    async def count(self, *, agent: str) -> int:
        """How many reminders wait for the agent to wake."""
        async with self._db.autocommit() as session:
            return len(await held_firings(session, agent=agent))

    async def deliver(self, *, agent: str) -> list[str]:
        """Start a delivery run for each held reminder; returns the runs started now.

        Call it once the agent is awake (its heartbeat row active): a run started while it still
        sleeps would only be held again.
        """
        started: list[str] = []
        async with self._db.autocommit() as session:
            held = await held_firings(session, agent=agent)
            reminders = {
                rid: await get_reminder(session, reminder_id=rid, agent=agent) for rid in held
            }
        for reminder_id, firing in held.items():
            reminder = reminders[reminder_id]
            if reminder is None:
                continue
            run_id = wake_run_id(reminder_id, firing.event_id)
            with contextlib.suppress(WorkflowAlreadyStartedError):
                await self._client.start_workflow(
                    names.REMINDER_WORKFLOW,
                    FiringInput(agent=agent, reminder_id=reminder_id),
                    id=run_id,
                    task_queue=reminder.task_queue,
                    id_reuse_policy=WorkflowIDReusePolicy.REJECT_DUPLICATE,
                    search_attributes=names.search_attributes(agent=agent, trigger="reminder"),
                    static_summary=f"reminder of {agent}, due while dormant: "
                    f"{reminder.objective[:100]}",
                )
                started.append(run_id)
        if started:
            log.info("%s woke: %d held reminders delivered", agent, len(started))
        return started
