"""The wait itself: it ends at its deadline, refused by default, and it survives a new worker."""

from __future__ import annotations

from datetime import timedelta

import pytest
from temporalio.client import Client, WorkflowExecutionStatus
from temporalio.testing import WorkflowEnvironment

from activities.gateway.providers.scripted import ScriptRule, ScriptToolCall
from contract import names
from schemas.approvals import ApprovalStatus
from tests.approvals.conftest import BELL, RULES, Bell, approvals_worker, saying, waiting
from tests.harness import Stack, unique
from usecases import approvals


async def test_no_decision_by_the_deadline_is_a_refusal_the_model_reads(
    skipping: WorkflowEnvironment, stack: Stack
) -> None:
    bell = Bell()
    async with approvals_worker(skipping.client, stack, bell=bell) as harness:
        agent = (await harness.create_agent()).handle
        said = saying(harness, agent)
        [asked] = await waiting(harness, agent)
        assert asked.deadline - asked.created_at == timedelta(minutes=10)

        await skipping.sleep(timedelta(minutes=11))
        receipt = await said

        assert bell.runs == []
        marker = receipt.marker
        assert marker is not None and marker.text is not None
        assert "no decision within 10 min: refused by default" in marker.text
        [kept] = await approvals.list_approvals(db=harness.db, agent=agent, every_status=True)
        assert (kept.status, kept.decided_by) == (ApprovalStatus.EXPIRED, "default")
        # Too late to approve: said in one line, and nothing runs.
        with pytest.raises(approvals.DecidedError, match=f"approval {asked.approval_id} expired"):
            await approvals.decide_approval(
                db=harness.db,
                client=skipping.client,
                approval_id=asked.approval_id,
                approve=True,
                by="Grace",
            )
        assert bell.runs == []


async def test_an_agents_own_wait_is_its_configured_one(
    skipping: WorkflowEnvironment, stack: Stack
) -> None:
    bell = Bell()
    handle = unique("agent")
    settings = {"tools": {"ring_bell": "always"}, "agents": {handle: {"timeout_seconds": 60}}}
    async with approvals_worker(skipping.client, stack, bell=bell, approvals=settings) as harness:
        await harness.create_agent(handle)
        said = saying(harness, handle)
        [asked] = await waiting(harness, handle)
        assert asked.deadline - asked.created_at == timedelta(minutes=1)
        await skipping.sleep(timedelta(minutes=2))
        receipt = await said
        assert receipt.marker is not None and receipt.marker.text is not None
        assert "no decision within 1 min: refused by default" in receipt.marker.text


async def test_the_wait_survives_a_new_worker(client: Client, stack: Stack) -> None:
    bell = Bell()
    queue = unique("tq")
    async with approvals_worker(client, stack, bell=bell, task_queue=queue) as harness:
        agent = (await harness.create_agent()).handle
        said = saying(harness, agent)
        [asked] = await waiting(harness, agent)
    # The first worker is gone; the activation waits on in Temporal, with nothing cached.
    async with approvals_worker(client, stack, bell=bell, task_queue=queue) as harness:
        decision = await approvals.decide_approval(
            db=harness.db,
            client=client,
            approval_id=asked.approval_id,
            approve=True,
            by="Grace",
        )
        receipt = await said
        # Released, the run reconsiders its reply beside the agent, then ends.
        activation = client.get_workflow_handle(names.activation_workflow_id(asked.activation_id))
        await activation.result()
    assert decision.approved and len(bell.runs) == 1
    assert receipt.marker is not None and receipt.marker.text is not None
    assert '"rung":1' in receipt.marker.text
    assert (await activation.describe()).status is WorkflowExecutionStatus.COMPLETED


async def test_a_late_wait_is_cut_to_what_the_run_has_left(
    skipping: WorkflowEnvironment, stack: Stack
) -> None:
    # The bell is rung again after the first wait expired: twelve minutes are gone, and the
    # run's 18 minutes keep three for the steps after a wait, so the second waits three.
    again = ScriptRule(
        task="respond",
        after_tool=True,
        tool_match="no decision",
        times=1,
        tool_calls=[ScriptToolCall(name=BELL, arguments={})],
    )
    bell = Bell()
    settings = {"tools": {BELL: "always"}, "timeout_seconds": 720}
    rules = [again, *RULES]
    async with approvals_worker(
        skipping.client, stack, bell=bell, approvals=settings, rules=rules
    ) as harness:
        agent = (await harness.create_agent()).handle
        said = saying(harness, agent)
        [first] = await waiting(harness, agent)
        assert first.deadline - first.created_at == timedelta(minutes=12)
        await skipping.sleep(timedelta(minutes=12, seconds=30))
        [second] = await waiting(harness, agent)
        assert second.approval_id != first.approval_id
        waited = second.deadline - second.created_at
        assert timedelta(minutes=2) < waited <= timedelta(minutes=3)
        await skipping.sleep(timedelta(minutes=4))
        receipt = await said
    assert bell.runs == []
    assert receipt.marker is not None and receipt.marker.outcome.value == "spoke"
