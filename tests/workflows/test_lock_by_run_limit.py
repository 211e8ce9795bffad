"""The lock waits for an admitted activation with no timer of its own.

Temporal ends every activation at ``ACTIVATION_RUN_LIMIT``, and however it ends, its end
releases the lock: a timer per event on top of that bound cost every message two history
events and a timer the server kept. A run continued at shape 2 takes this without asking.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator

import pytest
from temporalio.api.enums.v1 import EventType
from temporalio.client import Client

from contract import names
from schemas.agents import AGENT_SHAPE, AgentWorkflowInput
from schemas.events import Outcome
from tests.harness import Harness, Stack
from tests.workflows.gates import Gates, gated_worker, history

TIMER_EVENTS = {
    EventType.EVENT_TYPE_TIMER_STARTED,
    EventType.EVENT_TYPE_TIMER_CANCELED,
    EventType.EVENT_TYPE_TIMER_FIRED,
}


@pytest.fixture
def gates() -> Gates:
    return Gates()


@pytest.fixture
async def harness(client: Client, stack: Stack, gates: Gates) -> AsyncIterator[Harness]:
    async with gated_worker(client, stack, gates) as running:
        yield running


async def test_an_agent_starts_no_timer_for_the_events_it_holds(harness: Harness) -> None:
    agent = await harness.create_agent()
    workflow_id = names.agent_workflow_id(agent.handle)
    # A new run after every two events: the first asks the patch, the next takes it by shape.
    await harness.client.start_workflow(
        "AgentWorkflow",
        AgentWorkflowInput(handle=agent.handle, continue_as_new_after=2),
        id=workflow_id,
        task_queue=harness.task_queue,
    )
    for text in ("one", "two", "three"):
        receipt = await harness.say(agent.handle, text)
        assert receipt.marker is not None and receipt.marker.outcome is Outcome.SPOKE
    events = await history(harness.client, workflow_id)
    started = events[0].workflow_execution_started_event_attributes
    assert started.continued_execution_run_id
    assert json.loads(started.input.payloads[0].data)["shape"] == AGENT_SHAPE
    handled = [
        e
        for e in events
        if e.event_type == EventType.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_COMPLETED
    ]
    assert handled  # the continued run held an event
    first_run = harness.client.get_workflow_handle(
        workflow_id, run_id=started.continued_execution_run_id
    )
    earlier = list((await first_run.fetch_history()).events)
    assert [e.event_type for e in events + earlier if e.event_type in TIMER_EVENTS] == []


async def test_an_activation_whose_release_is_lost_still_releases_the_lock(
    harness: Harness, gates: Gates
) -> None:
    # Its release signal never arrives: only the activation's end can free the lock.
    lost = gates.lose_signal(
        workflow_type=names.ACTIVATION_WORKFLOW, signal=names.ACTIVATION_FINISHED
    )
    agent = await harness.create_agent()

    first = await harness.say(agent.handle, "hello")
    second = await harness.say(agent.handle, "and again")

    assert len(lost.senders) == 2  # both releases were lost
    for receipt, text in ((first, "hello"), (second, "and again")):
        assert receipt.marker is not None and receipt.marker.outcome is Outcome.SPOKE
        assert receipt.marker.text == f"ack: {text}"
