"""A reminder due while the agent sleeps is held, not lost, and delivered when it wakes.

On the time-skipping server, which has no schedules: the test starts ``ReminderWorkflow`` as a
one-shot reminder's schedule would, and wakes the agent as ``persyn heartbeat restore`` does once
the heartbeat's schedule is back (``HeldReminders.deliver``; a worker start does the same for
agents that are awake).
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from sqlmodel import col, select
from temporalio.testing import WorkflowEnvironment

from activities.autonomy.held import HeldReminders
from activities.gateway.providers.scripted import ScriptRule
from cli.heartbeat import render
from contract.names import reminder_schedule_id
from schemas.autonomy import (
    DORMANT_REASON,
    FiringInput,
    FiringResult,
    HeartbeatRecord,
    HeartbeatState,
    HeartbeatStatus,
    ReminderKind,
    ReminderStatus,
)
from schemas.ids import new_ulid
from schemas.models import TaskType
from store.queries.autonomy import bootstrap_heartbeat, save_reminder, set_heartbeat_state
from store.tables.autonomy import AutonomyLogRow, ReminderRow
from tests.autonomy.conftest import autonomy_worker, impulse_receipt
from tests.harness import Harness, Stack, until
from workflows.reminder import ReminderWorkflow

RULES = [ScriptRule(task="respond", match="water the plants", reply="Watering the plants now.")]


async def _status(harness: Harness, reminder_id: str) -> str:
    async with harness.db.session() as session:
        row = await session.get(ReminderRow, reminder_id, populate_existing=True)
        assert row is not None
        return row.status


async def _delivered_firing(harness: Harness, reminder_id: str) -> str:
    """The event ID of the reminder's firing that was delivered (waits for its claim)."""
    found: list[str] = []

    async def claimed() -> bool:
        async with harness.db.session() as session:
            rows = await session.exec(
                select(AutonomyLogRow.event_id).where(
                    AutonomyLogRow.reminder_id == reminder_id,
                    col(AutonomyLogRow.delivered).is_(True),
                )
            )
            found.extend(rows.all())
        return bool(found)

    await until(claimed)
    return found[0]


def _reminder_calls(harness: Harness) -> list[str]:
    """What the agent was told in its reminder activations, in order."""
    return [
        r.messages[-1].content
        for r in harness.provider.requests
        if r.task is TaskType.RESPOND and "water the plants" in r.messages[-1].content
    ]


async def test_a_one_shot_reminder_due_while_dormant_is_delivered_when_the_agent_wakes(
    skipping: WorkflowEnvironment, stack: Stack
) -> None:
    client = skipping.client
    async with autonomy_worker(client, stack, rules=RULES) as harness:
        handle = (await harness.create_agent()).handle
        now = datetime.now(UTC)
        reminder_id = new_ulid()
        async with harness.db.session() as session:
            await save_reminder(
                session,
                ReminderRow(
                    id=reminder_id,
                    agent=handle,
                    objective="water the plants",
                    kind=ReminderKind.ONE_SHOT.value,
                    status=ReminderStatus.ACTIVE.value,
                    at=now + timedelta(hours=1),
                    task_queue=harness.task_queue,
                    created_at=now,
                    updated_at=now,
                ),
            )
            # Asleep: the operator deleted the heartbeat.
            await bootstrap_heartbeat(
                session, agent=handle, interval_minutes=60, task_queue=harness.task_queue, at=now
            )
            await set_heartbeat_state(session, agent=handle, state=HeartbeatState.DELETED, at=now)

        # It comes due while the agent sleeps: quiet, but held rather than retired.
        fired: FiringResult = await client.execute_workflow(
            ReminderWorkflow.run,
            FiringInput(agent=handle, reminder_id=reminder_id),
            id=f"{reminder_schedule_id(reminder_id)}-due",
            task_queue=harness.task_queue,
        )
        assert not fired.delivered and fired.reason == DORMANT_REASON
        assert await _status(harness, reminder_id) == ReminderStatus.DUE_WHILE_DORMANT.value
        held = HeldReminders(harness.db, client)
        # A day of sleep later it is still waiting, and the agent was never woken for it.
        await skipping.sleep(timedelta(days=1))
        assert await held.count(agent=handle) == 1
        assert _reminder_calls(harness) == []

        # The agent wakes: the held reminder is delivered, once, saying when it came due.
        async with harness.db.session() as session:
            await set_heartbeat_state(
                session, agent=handle, state=HeartbeatState.ACTIVE, at=datetime.now(UTC)
            )
        [run_id] = await held.deliver(agent=handle)
        assert await held.deliver(agent=handle) == []  # a worker start as it wakes: no second
        delivered = await _delivered_firing(harness, reminder_id)
        receipt = await impulse_receipt(harness, handle, delivered)
        assert receipt.marker is not None and receipt.marker.text == "Watering the plants now."
        # The one-shot's spent schedule is deleted last; this server has no schedules to delete,
        # so that step gives up after its retries (skipped here) and the run ends regardless.
        await skipping.sleep(timedelta(minutes=10))
        woke: FiringResult = await client.get_workflow_handle(
            run_id, result_type=FiringResult
        ).result()
        assert woke.delivered and woke.event_id == delivered
        [told] = _reminder_calls(harness)
        assert "while you were dormant" in told
        # Delivered, the one-shot reminder is done and nothing waits any more.
        assert await _status(harness, reminder_id) == ReminderStatus.DONE.value
        assert await held.count(agent=handle) == 0
        assert await held.deliver(agent=handle) == []


def test_the_operator_is_told_what_waits_for_the_agent_to_wake() -> None:
    now = datetime.now(UTC)
    asleep = HeartbeatRecord(
        agent="ada",
        state=HeartbeatState.DELETED,
        interval_minutes=60,
        bootstrapped_at=now,
        deleted_at=now,
    )
    told = render("ada", HeartbeatStatus(record=asleep, held_reminders=2))
    assert "ada is asleep" in told
    assert "2 reminder(s) came due while it slept" in told
    assert "came due" not in render("ada", HeartbeatStatus(record=asleep))
