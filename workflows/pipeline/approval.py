"""Step: a tool call that needs approval waits for a person's decision (docs/approvals.md).

The generation round marks such a call (``ToolCallRef.approval``). Before it runs, the
activation records the approval as pending (a local activity), says what it waits for in its
current details and in the ``PersynApprovals`` search attribute, and waits on a durable timer
for the ``decide_approval`` update. Approved, the call runs as any other; refused, or with no
decision by the deadline (refused by default), the refusal is recorded as the call's result
and the model reads it on its next round. The decision is recorded once, by this run: an update
repeating it is answered with the recorded decision, so the tool can never run twice.

The wait survives a worker restart (it is a timer and a condition in the run's history). It
holds the agent's lock, so it is kept short: the configured wait (ten minutes by default, at
most twelve), and never past what the run's 18-minute timeout leaves for the steps after it.

Workflow code: deterministic, no I/O.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from datetime import timedelta

from temporalio import workflow
from temporalio.exceptions import ApplicationError

from contract import names
from contract.policies import ACTIVATION_RUN_LIMIT, MESSAGE_PATH_DATABASE, summarized_local
from schemas.activation import ActivationInput
from schemas.approvals import (
    ApprovalAsk,
    ApprovalDecision,
    ApprovalStatus,
    AskApprovalInput,
    DecideApprovalInput,
    SettleApprovalInput,
    expired_why,
)
from schemas.tools import ToolCallRef

with workflow.unsafe.imports_passed_through():
    from activities.tools.approvals import ApprovalActivities

PATCH = "tool-approvals"
"""Runs recorded before approvals ran every call at once; a run reaches the patch only at a
call the generation round marked for approval, which no earlier run's round did."""

DECISION_REFUSED = "DecisionRefused"
"""``ApplicationError.type`` of a ``decide_approval`` update the activation refuses."""

AFTER_THE_WAIT = timedelta(minutes=3)
"""What the run keeps for the steps after a wait: the next model round, deliberation, transmit."""

BY_DEFAULT = "default"
"""``decided_by`` of an approval nobody decided before its deadline."""


@dataclass
class _Wait:
    """One approval this run waits for (or waited for)."""

    tool: str
    decision: ApprovalDecision | None = None
    """Decided: by an update, or by the deadline passing."""
    recorded: ApprovalDecision | None = None
    """The decision as recorded in PostgreSQL: what every update for it is answered with."""


class ApprovalGate:
    """The approvals of one activation: the waits, and the update that ends them."""

    def __init__(self, data: ActivationInput) -> None:
        self._data = data
        self._waits: dict[str, _Wait] = {}

    def validate(self, decision: DecideApprovalInput) -> None:
        """Refuse a decision for an unknown approval, another agent's, or one decided otherwise.

        Raises:
            ApplicationError: Non-retryable, type :data:`DECISION_REFUSED`, in one line.
        """
        wait = self._waits.get(decision.approval_id)
        if wait is None:
            raise _refused(
                f"activation {self._data.activation_id} waits for no approval "
                f"{decision.approval_id}: `persyn approvals list` shows the waiting ones"
            )
        if decision.agent is not None and decision.agent != self._data.agent:
            raise _refused(
                f"approval {decision.approval_id} belongs to agent {self._data.agent}, "
                f"not to {decision.agent}"
            )
        decided = wait.recorded or wait.decision
        if decided is not None and decided.approved != decision.approve:
            raise _refused(_already(decided))

    async def decide(self, decision: DecideApprovalInput) -> ApprovalDecision:
        """Take ``decision`` (the first one counts) and answer once it is recorded."""
        wait = self._waits[decision.approval_id]
        if wait.decision is None:
            wait.decision = ApprovalDecision(
                approval_id=decision.approval_id,
                agent=self._data.agent,
                tool=wait.tool,
                status=ApprovalStatus.APPROVED if decision.approve else ApprovalStatus.REFUSED,
                decided_by=decision.by,
                decided_at=workflow.now(),
                why=decision.why,
            )
        await workflow.wait_condition(lambda: wait.recorded is not None)
        assert wait.recorded is not None
        return wait.recorded

    async def wait_for(self, call: ToolCallRef, ask: ApprovalAsk) -> ApprovalDecision:
        """Record the approval, wait for its decision (or the deadline), record the decision."""
        data = self._data
        wait = self._waits.setdefault(ask.approval_id, _Wait(tool=call.name))
        timeout = self._bounded(ask.timeout_seconds)
        now = workflow.now()
        await workflow.execute_local_activity_method(
            ApprovalActivities.ask,
            AskApprovalInput(
                approval_id=ask.approval_id,
                call_id=call.call_id,
                reason=ask.reason,
                asked_by=f"{data.person_name} ({data.event.trigger.value})",
                channel=data.channel.key,
                activation_id=data.activation_id,
                agent=data.agent,
                created_at=now,
                deadline=now + timeout,
            ),
            **summarized_local(MESSAGE_PATH_DATABASE, f"ask approval for {call.name}"),
        )
        workflow.set_current_details(
            f"Waiting for approval of {call.name} (approval {ask.approval_id})"
        )
        self._show()
        with contextlib.suppress(TimeoutError):  # the deadline passed: decided below
            await workflow.wait_condition(lambda: wait.decision is not None, timeout=timeout)
        if wait.decision is None:
            wait.decision = ApprovalDecision(
                approval_id=ask.approval_id,
                agent=data.agent,
                tool=call.name,
                status=ApprovalStatus.EXPIRED,
                decided_by=BY_DEFAULT,
                decided_at=workflow.now(),
                why=expired_why(timeout.total_seconds()),
            )
        wait.recorded = await workflow.execute_local_activity_method(
            ApprovalActivities.settle,
            SettleApprovalInput(call_id=call.call_id, decision=wait.decision),
            **summarized_local(MESSAGE_PATH_DATABASE, f"record the decision on {call.name}"),
        )
        workflow.set_current_details(
            f"{wait.recorded.status.value.capitalize()}: {call.name} (approval {ask.approval_id})"
        )
        self._show()
        return wait.recorded

    def _bounded(self, seconds: float) -> timedelta:
        """The wait: as configured, but never past what the run's timeout leaves."""
        info = workflow.info()
        limit = info.run_timeout or ACTIVATION_RUN_LIMIT
        left = limit - (workflow.now() - info.workflow_start_time) - AFTER_THE_WAIT
        return max(min(timedelta(seconds=seconds), left), timedelta(seconds=1))

    def _show(self) -> None:
        """The approvals still waiting, where the Web UI can search for them."""
        waiting = [key for key, wait in self._waits.items() if wait.recorded is None]
        if waiting:
            workflow.upsert_search_attributes([names.APPROVALS.value_set(waiting)])
        else:
            workflow.upsert_search_attributes([names.APPROVALS.value_unset()])


def _already(decided: ApprovalDecision) -> str:
    when = decided.decided_at.strftime("%Y-%m-%d %H:%M:%S UTC")
    if decided.status is ApprovalStatus.EXPIRED:
        return f"approval {decided.approval_id} expired at {when} (refused by default)"
    return (
        f"approval {decided.approval_id} was already {decided.status.value} by "
        f"{decided.decided_by} at {when}"
    )


def _refused(message: str) -> ApplicationError:
    return ApplicationError(message, type=DECISION_REFUSED, non_retryable=True)
