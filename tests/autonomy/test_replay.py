"""The autonomy workflows replay deterministically: fresh histories, and histories recorded earlier.

Covers ``HeartbeatWorkflow``, ``ReminderWorkflow`` (a one-shot, so its retirement too) and an
``ActivationWorkflow`` for a heartbeat: self-assessment, a tool round and the answer.
PERSYN_RECORD_HISTORIES=1 records a history that has no file yet; recorded ones are kept, never
rewritten: a change to workflow code must replay them (``workflow.patched``).
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from temporalio.client import Client, ScheduleActionExecutionStartWorkflow, WorkflowHistory

from activities.gateway.providers.scripted import ScriptRule, ScriptToolCall
from activities.scheduling.heartbeats import Heartbeats
from activities.scheduling.reminders import Reminders
from contract import names
from temporal import schedules_autonomy as schedules
from tests.autonomy.conftest import autonomy_worker, fired_run, impulse_receipt
from tests.harness import Stack, record_new_histories, replayer, until

HISTORIES = Path(__file__).parent / "histories"
NAMES = ["heartbeat", "reminder", "activation_tools"]


async def _fire(client: Client, schedule_id: str) -> str:
    await client.get_schedule_handle(schedule_id).trigger()

    async def fired() -> bool:
        found = await client.get_schedule_handle(schedule_id).describe()
        return bool(found.info.recent_actions)

    await until(fired)
    description = await client.get_schedule_handle(schedule_id).describe()
    action = description.info.recent_actions[-1].action
    assert isinstance(action, ScheduleActionExecutionStartWorkflow)
    return action.workflow_id


async def _scenario(client: Client, stack: Stack) -> dict[str, WorkflowHistory]:
    rules = [
        ScriptRule(task="critique", system_match="during its heartbeat", reply="Keep going."),
        ScriptRule(task="respond", after_tool=True, reply="Noted: {tool}"),
        ScriptRule(
            task="respond",
            match="Heartbeat",
            tool_calls=[ScriptToolCall(name="calculate", arguments={"expression": "40+2"})],
        ),
    ]
    async with autonomy_worker(client, stack, rules=rules) as harness:
        handle = (await harness.create_agent()).handle
        settings = harness.deps.settings.autonomy
        now = datetime.now(UTC)
        heartbeats = Heartbeats(harness.db, client, settings)
        await heartbeats.bootstrap(agent=handle, task_queue=harness.task_queue, now=now)
        heartbeat_schedule = names.heartbeat_schedule_id(handle)
        beat_id = await _fire(client, heartbeat_schedule)
        beat = await fired_run(client, heartbeat_schedule)
        assert beat.event_id is not None
        receipt = await impulse_receipt(harness, handle, beat.event_id)
        assert receipt.marker is not None and receipt.marker.activation_id is not None

        reminder = await Reminders(harness.db, client, settings).create(
            agent=handle,
            objective="look at the sky",
            now=now,
            task_queue=harness.task_queue,
            at=now + timedelta(days=1),
        )
        reminder_schedule = schedules.reminder_schedule_id(reminder.reminder_id)
        reminder_id = await _fire(client, reminder_schedule)
        reminder_run = client.get_workflow_handle(reminder_id)
        await reminder_run.result()
        await heartbeats.delete(agent=handle, task_queue=harness.task_queue, now=now)
        activation = client.get_workflow_handle(
            names.activation_workflow_id(receipt.marker.activation_id)
        )
        await activation.result()
        return {
            "heartbeat": await client.get_workflow_handle(beat_id).fetch_history(),
            "reminder": await reminder_run.fetch_history(),
            "activation_tools": await activation.fetch_history(),
        }


async def test_fresh_autonomy_histories_replay(client: Client, stack: Stack) -> None:
    histories = await _scenario(client, stack)
    kinds = [
        e.activity_task_scheduled_event_attributes.activity_type.name
        for e in histories["activation_tools"].events
        if e.HasField("activity_task_scheduled_event_attributes")
    ]
    assert {"autonomy.self_assess", "generation.generate", "tools.invoke"} <= set(kinds)
    record_new_histories(HISTORIES, histories)
    for history in histories.values():
        await replayer(client).replay_workflow(history)


@pytest.mark.parametrize("name", NAMES)
async def test_recorded_autonomy_histories_replay(name: str, client: Client) -> None:
    path = HISTORIES / f"{name}.json"
    assert path.exists(), f"record it with PERSYN_RECORD_HISTORIES=1 ({path.name})"
    history = WorkflowHistory.from_json(f"{name}-recorded", path.read_text())
    await replayer(client).replay_workflow(history)
