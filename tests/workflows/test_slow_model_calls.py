"""A model call slower than its heartbeat timeout still completes on its first attempt.

Every model call runs with a short heartbeat timeout (``contract.policies.MODEL_CALL``), so a
worker that dies mid-call is noticed in seconds. That holds only if the call heartbeats while
the model thinks: one that does not is timed out, retried and paid for again, and a slow
local model made the heartbeat's self-assessment outlast its timeout every time.
"""

from __future__ import annotations

from datetime import UTC, datetime

from temporalio.api.enums.v1 import EventType
from temporalio.api.history.v1 import HistoryEvent
from temporalio.client import Client

from activities.gateway.providers.scripted import ScriptRule
from contract import names
from contract.policies import MODEL_CALL
from schemas.events import ImpulseInput, Outcome, Trigger
from schemas.ids import new_ulid
from temporal import inbox
from tests.harness import Stack, running_worker, until

HEARTBEAT_TIMEOUT = MODEL_CALL["heartbeat_timeout"]
assert HEARTBEAT_TIMEOUT is not None
SLOWER_THAN_THE_TIMEOUT_MS = 1000 * HEARTBEAT_TIMEOUT.total_seconds() + 1500


async def _activity_events(client: Client, agent: str, activity: str) -> list[str]:
    """The events of ``activity``'s calls in the agent's activations, by name, in order."""
    seen: list[str] = []
    query = f'WorkflowType = "ActivationWorkflow" AND {names.AGENT.name} = "{agent}"'
    async for run in client.list_workflows(query):
        history = await client.get_workflow_handle(run.id, run_id=run.run_id).fetch_history()
        scheduled: set[int] = set()
        for e in history.events:
            kind = e.event_type
            if kind == EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED:
                if e.activity_task_scheduled_event_attributes.activity_type.name == activity:
                    scheduled.add(e.event_id)
                    seen.append("scheduled")
            elif kind == EventType.EVENT_TYPE_ACTIVITY_TASK_STARTED:
                started = e.activity_task_started_event_attributes
                if started.scheduled_event_id in scheduled:
                    seen.append(f"started attempt {started.attempt}")
            elif kind in _ENDINGS and _scheduled_id(e) in scheduled:
                seen.append(_ENDINGS[kind])
    return seen


_ENDINGS = {
    EventType.EVENT_TYPE_ACTIVITY_TASK_COMPLETED: "completed",
    EventType.EVENT_TYPE_ACTIVITY_TASK_TIMED_OUT: "timed out",
    EventType.EVENT_TYPE_ACTIVITY_TASK_FAILED: "failed",
}


def _scheduled_id(e: HistoryEvent) -> int:
    if e.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_COMPLETED:
        return e.activity_task_completed_event_attributes.scheduled_event_id
    if e.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_TIMED_OUT:
        return e.activity_task_timed_out_event_attributes.scheduled_event_id
    return e.activity_task_failed_event_attributes.scheduled_event_id


async def test_a_slow_self_assessment_heartbeats_through_its_first_attempt(
    client: Client, stack: Stack
) -> None:
    slow = ScriptRule(
        system_match="own critical voice",
        reply="You kept your promises this week.",
        delay_ms=SLOWER_THAN_THE_TIMEOUT_MS,
    )
    async with running_worker(client, stack, rules=[slow]) as harness:
        agent = await harness.create_agent()
        beat = ImpulseInput(
            event_id=new_ulid(), trigger=Trigger.HEARTBEAT, text="Heartbeat.", at=datetime.now(UTC)
        )
        await inbox.impulse(
            harness.client, handle=agent.handle, impulse=beat, task_queue=harness.task_queue
        )

        async def answered() -> bool:
            found = await inbox.marker(harness.client, handle=agent.handle, event_id=beat.event_id)
            return found.marker is not None

        await until(answered)
        marker = (
            await inbox.marker(harness.client, handle=agent.handle, event_id=beat.event_id)
        ).marker
        assert marker is not None and marker.outcome is Outcome.SPOKE
        events = await _activity_events(client, agent.handle, "autonomy.self_assess")
        assert events == ["scheduled", "started attempt 1", "completed"]
        assert slow.used == 1  # the model was asked once
