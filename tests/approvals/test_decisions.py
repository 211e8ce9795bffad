"""A call that needs approval waits for it: approved it runs once, refused the model reads why."""

from __future__ import annotations

import asyncio
import json

import pytest
from temporalio.client import Client, WorkflowUpdateFailedError
from temporalio.exceptions import ApplicationError

from contract import names
from schemas.approvals import ApprovalDecision, ApprovalStatus, DecideApprovalInput
from schemas.events import Outcome
from store.tables import OutboxRow
from tests.approvals.conftest import BELL, Bell, approvals_worker, saying, waiting
from tests.autonomy.conftest import tool_calls
from tests.harness import Stack, until
from usecases import approvals


async def test_an_approved_call_runs_once_and_the_model_reads_its_result(
    client: Client, stack: Stack
) -> None:
    bell = Bell()
    async with approvals_worker(client, stack, bell=bell) as harness:
        agent = (await harness.create_agent()).handle
        said = saying(harness, agent)
        [asked] = await waiting(harness, agent)
        assert (asked.tool, asked.agent, asked.status) == (BELL, agent, ApprovalStatus.PENDING)
        assert asked.arguments == '{"loudness": 3}' and "always needs approval" in asked.reason
        assert asked.asked_by.startswith("Ada") and asked.channel == "terminal:tty"
        assert bell.runs == []  # nothing runs before the decision
        # Ada is told, on her channel, that the agent waits (the platform says so, once).
        async with harness.db.session() as session:
            notice = await session.get(OutboxRow, asked.approval_id)
        assert notice is not None and notice.unprompted and notice.channel_key == "terminal:tty"
        assert notice.text == (
            "(Before I can use ring_bell, a person has to approve it. I will go on as soon as "
            "they decide, or in 10 min at most.)"
        )
        activation = client.get_workflow_handle(names.activation_workflow_id(asked.activation_id))

        async def shown() -> bool:
            # The row is written inside the task that then tags the run: the tag lands when
            # that task completes, a moment after the row.
            described = await activation.describe()
            return described.typed_search_attributes.get(names.APPROVALS) == [asked.approval_id]

        await until(shown, timeout=30)

        decision = await approvals.decide_approval(
            db=harness.db,
            client=client,
            approval_id=asked.approval_id,
            approve=True,
            by="Grace",
            why="it is time",
        )
        receipt = await said

        assert (decision.status, decision.decided_by, decision.why) == (
            ApprovalStatus.APPROVED,
            "Grace",
            "it is time",
        )
        marker = receipt.marker
        assert marker is not None and marker.outcome is Outcome.SPOKE
        assert marker.text is not None and '"rung":1' in marker.text
        assert len(bell.runs) == 1
        [call] = await tool_calls(harness, asked.activation_id)
        assert not call.is_error and call.id == bell.runs[0]
        # Decided, the approval no longer waits; its record says who, when and why.
        assert await approvals.list_approvals(db=harness.db, agent=agent) == []
        [kept] = await approvals.list_approvals(db=harness.db, agent=agent, every_status=True)
        assert (kept.status, kept.decided_by, kept.why) == (
            ApprovalStatus.APPROVED,
            "Grace",
            "it is time",
        )
        described = await activation.describe()
        assert not described.typed_search_attributes.get(names.APPROVALS)

        # The same decision again (the run has ended) is answered from the record; the tool
        # does not run again. The other way is refused in one line.
        again = await approvals.decide_approval(
            db=harness.db, client=client, approval_id=asked.approval_id, approve=True, by="Ann"
        )
        assert again == decision and len(bell.runs) == 1
        with pytest.raises(approvals.DecidedError, match="already approved by Grace"):
            await approvals.decide_approval(
                db=harness.db, client=client, approval_id=asked.approval_id, approve=False, by="x"
            )


async def test_a_refused_call_never_runs_and_the_model_reads_who_refused_and_why(
    client: Client, stack: Stack
) -> None:
    bell = Bell()
    async with approvals_worker(client, stack, bell=bell) as harness:
        agent = (await harness.create_agent()).handle
        said = saying(harness, agent)
        [asked] = await waiting(harness, agent)
        decision = await approvals.decide_approval(
            db=harness.db,
            client=client,
            approval_id=asked.approval_id,
            approve=False,
            by="Grace",
            why="the baby sleeps",
        )
        receipt = await said

        assert decision.status is ApprovalStatus.REFUSED
        assert bell.runs == []
        marker = receipt.marker
        assert marker is not None and marker.text is not None
        assert "refused by Grace: the baby sleeps" in marker.text
        [call] = await tool_calls(harness, asked.activation_id)
        assert call.is_error
        assert json.loads(str(call.result)) == {"error": "refused by Grace: the baby sleeps"}
        # Once the run has ended the update cannot reach it: the record answers instead.
        activation = client.get_workflow_handle(names.activation_workflow_id(asked.activation_id))
        await activation.result()
        again = await approvals.decide_approval(
            db=harness.db, client=client, approval_id=asked.approval_id, approve=False, by="Bo"
        )
        assert again == decision
        with pytest.raises(approvals.DecidedError, match="already refused by Grace"):
            await approvals.decide_approval(
                db=harness.db, client=client, approval_id=asked.approval_id, approve=True, by="Bo"
            )


async def test_a_decision_sent_twice_is_answered_twice_and_runs_the_tool_once(
    client: Client, stack: Stack
) -> None:
    bell = Bell()
    async with approvals_worker(client, stack, bell=bell) as harness:
        agent = (await harness.create_agent()).handle
        said = saying(harness, agent)
        [asked] = await waiting(harness, agent)
        activation = client.get_workflow_handle(names.activation_workflow_id(asked.activation_id))
        data = DecideApprovalInput(approval_id=asked.approval_id, approve=True, by="Grace")
        # Two updates at once, with different update IDs: both answered with one decision.
        first, second = await asyncio.gather(
            activation.execute_update(
                names.DECIDE_APPROVAL, data, id="one", result_type=ApprovalDecision
            ),
            activation.execute_update(
                names.DECIDE_APPROVAL,
                data.model_copy(update={"by": "Ann"}),
                id="two",
                result_type=ApprovalDecision,
            ),
        )
        await said
        assert first == second and first.approved
        assert len(bell.runs) == 1


async def test_an_unknown_approval_or_another_agents_is_refused_in_one_line(
    client: Client, stack: Stack
) -> None:
    bell = Bell()
    async with approvals_worker(client, stack, bell=bell) as harness:
        agent = (await harness.create_agent()).handle
        other = (await harness.create_agent()).handle
        said = saying(harness, agent)
        [asked] = await waiting(harness, agent)
        activation = client.get_workflow_handle(names.activation_workflow_id(asked.activation_id))
        nobody = "01JAAAAAAAAAAAAAAAAAAAAAAA"

        with pytest.raises(approvals.UnknownApprovalError, match=f"no approval {nobody}"):
            await approvals.decide_approval(
                db=harness.db, client=client, approval_id=nobody, approve=True, by="Grace"
            )
        with pytest.raises(approvals.OtherAgentsError, match=f"not one of {other}'s"):
            await approvals.decide_approval(
                db=harness.db,
                client=client,
                approval_id=asked.approval_id,
                approve=True,
                by="Grace",
                agent=other,
            )
        # Straight to the activation (as an integrator would): its validator refuses both.
        for data, expected in (
            (
                DecideApprovalInput(approval_id=nobody, approve=True, by="Grace"),
                f"waits for no approval {nobody}",
            ),
            (
                DecideApprovalInput(
                    approval_id=asked.approval_id, approve=True, by="Grace", agent=other
                ),
                f"belongs to agent {agent}, not to {other}",
            ),
        ):
            with pytest.raises(WorkflowUpdateFailedError) as caught:
                await activation.execute_update(
                    names.DECIDE_APPROVAL, data, result_type=ApprovalDecision
                )
            cause = caught.value.cause
            assert isinstance(cause, ApplicationError) and cause.type == "DecisionRefused"
            assert expected in cause.message and "\n" not in cause.message
        assert bell.runs == [] and not said.done()

        await approvals.decide_approval(
            db=harness.db, client=client, approval_id=asked.approval_id, approve=True, by="Grace"
        )
        await said
        assert len(bell.runs) == 1


async def test_a_wait_whose_activation_ended_is_closed_when_someone_decides(
    client: Client, stack: Stack
) -> None:
    bell = Bell()
    async with approvals_worker(client, stack, bell=bell) as harness:
        agent = (await harness.create_agent()).handle
        said = saying(harness, agent)
        [asked] = await waiting(harness, agent)
        activation = client.get_workflow_handle(names.activation_workflow_id(asked.activation_id))
        await activation.terminate(reason="an operator ended the turn")
        receipt = await said
        assert receipt.marker is not None and receipt.marker.outcome is Outcome.FAILED

        with pytest.raises(approvals.DecidedError, match="its activation ended before anyone"):
            await approvals.decide_approval(
                db=harness.db, client=client, approval_id=asked.approval_id, approve=True, by="Al"
            )
        assert await approvals.list_approvals(db=harness.db, agent=agent) == []
        [kept] = await approvals.list_approvals(db=harness.db, agent=agent, every_status=True)
        assert kept.status is ApprovalStatus.EXPIRED and bell.runs == []
