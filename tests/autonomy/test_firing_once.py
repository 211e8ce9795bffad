"""A firing is claimed once even when the workflow task that claimed it is run again.

The claim is a local activity: the firing's log row (and a reminder's count) are committed
while the firing workflow's task is still open. If that task never completes (the worker is
killed, or Temporal cannot be told), Temporal runs it again, and the claim runs again. The
retry must name the same impulse, or the firing is logged and counted twice.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from sqlmodel import select
from temporalio.client import Client

from activities.gateway.providers.scripted import ScriptRule
from activities.scheduling.reminders import Reminders
from contract import names
from store.tables.autonomy import AutonomyLogRow, ReminderRow
from temporal import schedules_autonomy as schedules
from tests.autonomy.conftest import autonomy_worker, fired_run, impulse_receipt
from tests.harness import Stack, replayer, until
from tests.workflows.gates import Gates, with_gates

RULES = [ScriptRule(reply="Stretching now.")]


async def _fired(client: Client, schedule_id: str) -> bool:
    found = await schedules.describe(client, schedule_id)
    return found is not None and bool(found.info.recent_actions)


async def test_a_claim_run_again_by_a_retried_workflow_task_logs_one_firing(
    client: Client, stack: Stack
) -> None:
    gates = Gates()
    # The task that claimed the firing fails as it schedules the impulse's delivery: nothing
    # it did reaches the history, so the retried task claims again.
    failure = gates.fail_task(
        workflow_type=names.REMINDER_WORKFLOW, before_activity="autonomy.deliver_impulse"
    )
    gated = with_gates(client, gates)
    async with autonomy_worker(gated, stack, rules=RULES) as harness:
        agent = await harness.create_agent()
        settings = stack.settings()
        reminders = Reminders(harness.db, gated, settings.autonomy)
        reminder = await reminders.create(
            agent=agent.handle,
            objective="stretch",
            now=datetime.now(UTC),
            task_queue=harness.task_queue,
            every_minutes=60,
        )
        schedule_id = schedules.reminder_schedule_id(reminder.reminder_id)
        await gated.get_schedule_handle(schedule_id).trigger()
        await until(lambda: _fired(gated, schedule_id))
        result = await fired_run(gated, schedule_id)
        assert result.delivered and result.event_id is not None
        receipt = await impulse_receipt(harness, agent.handle, result.event_id)
        assert receipt.marker is not None

        assert len(failure.failed) == 1  # the retry happened
        async with harness.db.session() as session:
            logged: Any = await session.exec(
                select(AutonomyLogRow.event_id).where(
                    AutonomyLogRow.reminder_id == reminder.reminder_id
                )
            )
            assert logged.all() == [result.event_id]
            row = await session.get(ReminderRow, reminder.reminder_id)
            assert row is not None and row.fired == 1
        # The firing's history, with its failed task, replays deterministically.
        history = await gated.get_workflow_handle(failure.failed[0]).fetch_history()
        await replayer(gated).replay_workflow(history)
        await reminders.cancel(
            agent=agent.handle, reminder_id=reminder.reminder_id, now=datetime.now(UTC)
        )
