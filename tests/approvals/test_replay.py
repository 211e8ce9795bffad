"""Activations that waited for approval replay deterministically: fresh, and as recorded.

Covers an ``ActivationWorkflow`` whose tool call was approved (the wait, the update, the call)
and one whose call nobody decided in time on the time-skipping server (the timer). The old
recorded activations replay too (``tests/workflows/test_replay.py``, ``tests/autonomy``):
their rounds marked no call, so they never reach the ``tool-approvals`` patch.
PERSYN_RECORD_HISTORIES=1 records a history that has no file yet; recorded ones are kept.
"""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest
from temporalio.client import Client, WorkflowHistory
from temporalio.testing import WorkflowEnvironment

from contract import names
from tests.approvals.conftest import Bell, approvals_worker, saying, waiting
from tests.harness import Harness, Stack, record_new_histories, replayer
from usecases import approvals

HISTORIES = Path(__file__).parent / "histories"
NAMES = ["activation_approved", "activation_expired"]


async def _history(harness: Harness, activation_id: str) -> WorkflowHistory:
    run = harness.client.get_workflow_handle(names.activation_workflow_id(activation_id))
    await run.result()
    return await run.fetch_history()


async def test_an_approved_wait_replays(client: Client, stack: Stack) -> None:
    async with approvals_worker(client, stack, bell=Bell()) as harness:
        agent = (await harness.create_agent()).handle
        said = saying(harness, agent)
        [asked] = await waiting(harness, agent)
        await approvals.decide_approval(
            db=harness.db, client=client, approval_id=asked.approval_id, approve=True, by="Grace"
        )
        await said
        history = await _history(harness, asked.activation_id)
    kinds = [
        e.activity_task_scheduled_event_attributes.activity_type.name
        for e in history.events
        if e.HasField("activity_task_scheduled_event_attributes")
    ]
    assert "tools.invoke" in kinds
    updates = [
        e
        for e in history.events
        if e.HasField("workflow_execution_update_accepted_event_attributes")
    ]
    assert len(updates) == 1
    record_new_histories(HISTORIES, {"activation_approved": history})
    await replayer(client).replay_workflow(history)


async def test_an_expired_wait_replays(skipping: WorkflowEnvironment, stack: Stack) -> None:
    async with approvals_worker(skipping.client, stack, bell=Bell()) as harness:
        agent = (await harness.create_agent()).handle
        said = saying(harness, agent)
        [asked] = await waiting(harness, agent)
        await skipping.sleep(timedelta(minutes=11))
        await said
        history = await _history(harness, asked.activation_id)
    assert any(e.HasField("timer_fired_event_attributes") for e in history.events)
    record_new_histories(HISTORIES, {"activation_expired": history})
    await replayer(skipping.client).replay_workflow(history)


@pytest.mark.parametrize("name", NAMES)
async def test_recorded_approval_histories_replay(name: str, client: Client) -> None:
    path = HISTORIES / f"{name}.json"
    assert path.exists(), f"record it with PERSYN_RECORD_HISTORIES=1 ({path.name})"
    history = WorkflowHistory.from_json(f"{name}-recorded", path.read_text())
    await replayer(client).replay_workflow(history)
