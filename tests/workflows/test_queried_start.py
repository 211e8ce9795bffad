"""An agent queried while its run's first task waits on a local activity still replays.

A query that reaches a run while its workflow task waits on a local activity can make the
worker complete that task with the activity's result recorded but none of what the code did
after it: the code after it runs in the next task. On replay the result resolves in the first
task, so a patch first asked right after it was looked for in the wrong task and the run
failed ("Non-deprecated patch marker encountered"). A run now asks its patches before its
first local activity (``workflows/up_front.py``).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from typing import Any

from temporalio.api.enums.v1 import EventType
from temporalio.client import WorkflowExecutionStatus, WorkflowHandle, WorkflowHistory

from contract import names
from schemas.agents import AGENT_SHAPE, AgentWorkflowInput
from schemas.events import MarkerAnswer, MarkerQuery
from tests.harness import Harness, replayer
from workflows import agent as agent_workflow
from workflows import conversation as conversation_workflow
from workflows import run_length


async def _start_by_hand(harness: Harness, handle: str, **fields: int) -> WorkflowHandle[Any, Any]:
    """Start an agent's run as an integrator may: no shape, so the run asks its patches."""
    return await harness.client.start_workflow(
        "AgentWorkflow",
        AgentWorkflowInput(handle=handle, **fields),
        id=names.agent_workflow_id(handle),
        task_queue=harness.task_queue,
    )


async def test_runs_queried_throughout_their_first_task_replay(harness: Harness) -> None:
    agent = await harness.create_agent()
    workflow_id = names.agent_workflow_id(agent.handle)
    # A new run after every message: each message meets a run's first task.
    await _start_by_hand(harness, agent.handle, continue_as_new_after=1)
    handle = harness.client.get_workflow_handle(workflow_id)
    stop = asyncio.Event()

    async def poll() -> int:
        asked = 0
        while not stop.is_set():
            with contextlib.suppress(Exception):  # a query between runs may find none
                await handle.query(
                    names.MARKER, MarkerQuery(event_id="0" * 26), result_type=MarkerAnswer
                )
                asked += 1
        return asked

    pollers = [asyncio.create_task(poll()) for _ in range(3)]
    try:
        for i in range(12):
            receipt = await harness.say(agent.handle, f"turn {i}")
            assert receipt.marker is not None
    finally:
        stop.set()
    asked = sum(await asyncio.gather(*pollers))
    assert asked > 0

    runs = [
        run
        async for run in harness.client.list_workflows(f"WorkflowId = '{workflow_id}'")
        if run.status == WorkflowExecutionStatus.CONTINUED_AS_NEW
    ]
    assert len(runs) >= 12
    play = replayer(harness.client)
    failed = []
    for run in runs:
        history = await harness.client.get_workflow_handle(
            workflow_id, run_id=run.run_id
        ).fetch_history()
        result = await play.replay_workflow(history, raise_on_replay_failure=False)
        if result.replay_failure is not None:
            failed.append(f"{run.run_id}: {result.replay_failure}")
    assert failed == []


def _markers(history: WorkflowHistory) -> list[str]:
    """The run's markers in order: a patch's ID, or ``local activity``."""
    found = []
    for e in history.events:
        if e.event_type != EventType.EVENT_TYPE_MARKER_RECORDED:
            continue
        attributes = e.marker_recorded_event_attributes
        if attributes.marker_name == "core_patch":
            found.append(json.loads(attributes.details["patch-data"].payloads[0].data)["id"])
        elif attributes.marker_name == "core_local_activity":
            found.append("local activity")
    return found


async def test_a_hand_started_agent_and_its_conversation_ask_every_patch_up_front(
    harness: Harness,
) -> None:
    agent = await harness.create_agent()
    # Started by hand, as an integrator may: no shape, so the run asks its patches.
    await _start_by_hand(harness, agent.handle)
    await harness.say(agent.handle, "hello")
    # The second exchange has the conversation evaluate its guardrails (a local activity).
    receipt = await harness.say(agent.handle, "and again")
    assert receipt.marker is not None and receipt.marker.conversation_id is not None
    runs = {
        "agent": (names.agent_workflow_id(agent.handle), agent_workflow.ASKED_UP_FRONT),
        "conversation": (
            names.conversation_workflow_id(receipt.marker.conversation_id),
            conversation_workflow.ASKED_UP_FRONT,
        ),
    }
    for kind, (workflow_id, asked) in runs.items():
        history = await harness.client.get_workflow_handle(workflow_id).fetch_history()
        markers = _markers(history)
        assert "local activity" in markers, kind
        first_activity = markers.index("local activity")
        up_front = markers[:first_activity]
        # Every patch the run uses was asked before anything could come between, and none
        # was first asked later: a later one would be the next run a query breaks.
        assert set(up_front) >= {*asked, run_length.PATCH_HISTORY_LIMIT}, kind
        assert not set(markers[first_activity:]) - {"local activity"}, kind


async def test_a_continued_agent_run_takes_its_patches_from_its_shape(harness: Harness) -> None:
    agent = await harness.create_agent()
    workflow_id = names.agent_workflow_id(agent.handle)
    first = await _start_by_hand(harness, agent.handle, continue_as_new_after=1)
    await harness.say(agent.handle, "hello")
    await harness.say(agent.handle, "and again")
    handle = harness.client.get_workflow_handle(workflow_id)
    assert (await handle.describe()).run_id != first.result_run_id
    history = await handle.fetch_history()
    started = history.events[0].workflow_execution_started_event_attributes
    # The run continued itself, so it names its shape: it asks nothing, writes no marker, and
    # leaves nothing a query could move.
    assert json.loads(started.input.payloads[0].data)["shape"] == AGENT_SHAPE
    assert [m for m in _markers(history) if m != "local activity"] == []


async def test_a_continued_conversation_asks_no_patch(harness: Harness) -> None:
    agent = await harness.create_agent()
    # Its conversations take the agent's limit: a short one makes the conversation continue.
    await _start_by_hand(harness, agent.handle, history_limit=100)
    for i in range(24):
        receipt = await harness.say(agent.handle, f"turn {i}")
    assert receipt.marker is not None and receipt.marker.conversation_id is not None
    talk = harness.client.get_workflow_handle(
        names.conversation_workflow_id(receipt.marker.conversation_id)
    )
    history = await talk.fetch_history()
    started = history.events[0].workflow_execution_started_event_attributes
    assert started.continued_execution_run_id  # the current run continued an earlier one
    assert json.loads(started.input.payloads[0].data)["state"]["asked_up_front"] is True
    assert [m for m in _markers(history) if m != "local activity"] == []
