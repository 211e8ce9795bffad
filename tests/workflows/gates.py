"""Gates that make a race between workflows happen the same way on every run.

A :class:`Gates` interceptor on a test worker can hold chosen activities (local ones too) until
the test opens their gate, and can fail one workflow task of a chosen workflow right before a
chosen local activity is scheduled: what a worker killed at that moment, or a Temporal server
that never heard the task complete, leaves behind. Everything else runs as in production.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

from temporalio import activity, workflow
from temporalio import client as temporal_client
from temporalio.api.enums.v1 import EventType
from temporalio.api.history.v1 import HistoryEvent
from temporalio.client import Client
from temporalio.worker import (
    ActivityInboundInterceptor,
    ExecuteActivityInput,
    Interceptor,
    SignalExternalWorkflowInput,
    StartActivityInput,
    StartLocalActivityInput,
    WorkflowInboundInterceptor,
    WorkflowInterceptorClassInput,
    WorkflowOutboundInterceptor,
)

from activities.gateway.providers.scripted import ScriptRule
from tests.harness import Harness, Stack, running_worker

Match = Callable[[activity.Info, Sequence[Any]], bool]
"""Whether an activity about to run (its info and its arguments) is one the gate holds."""


@dataclass
class Gate:
    """Holds every activity it matches until :meth:`open` is called."""

    match: Match
    entered: asyncio.Event = field(default_factory=asyncio.Event)
    opened: asyncio.Event = field(default_factory=asyncio.Event)
    held: int = 0

    def open(self) -> None:
        """Let the held activities (and every later match) run."""
        self.opened.set()

    async def pass_(self) -> None:
        self.held += 1
        self.entered.set()
        await self.opened.wait()


@dataclass
class LostSignal:
    """Every ``signal`` a workflow of ``workflow_type`` sends is lost (always, so replay agrees)."""

    workflow_type: str
    signal: str
    senders: list[str] = field(default_factory=list)
    """IDs of the workflows whose signal was lost, once each."""


@dataclass
class TaskFailure:
    """Fails one workflow task of ``workflow_type`` as it schedules the activity named (local or
    not)."""

    workflow_type: str
    local_activity: str
    failed: list[str] = field(default_factory=list)
    """IDs of the workflows whose task was failed (each once)."""


class Gates(temporal_client.Interceptor, Interceptor):
    """A worker interceptor with the gates and task failures a test arms.

    Also a client interceptor (which passes every call on) so a client can carry it to the
    workers built on that client.
    """

    def __init__(self) -> None:
        self.gates: list[Gate] = []
        self.failures: list[TaskFailure] = []
        self.lost: list[LostSignal] = []

    def hold(self, match: Match) -> Gate:
        """A new closed gate for the activities ``match`` picks."""
        gate = Gate(match)
        self.gates.append(gate)
        return gate

    def fail_task(
        self,
        *,
        workflow_type: str,
        before_local_activity: str | None = None,
        before_activity: str | None = None,
        before_signal: str | None = None,
    ) -> TaskFailure:
        """Fail the first workflow task of each such workflow that schedules that activity (or
        sends that signal to another workflow)."""
        name = before_local_activity or before_activity
        if before_signal is not None:
            name = f"signal:{before_signal}"
        assert name is not None, "name the activity or signal the task fails before"
        failure = TaskFailure(workflow_type, name)
        self.failures.append(failure)
        return failure

    def lose_signal(self, *, workflow_type: str, signal: str) -> LostSignal:
        """Lose every ``signal`` a workflow of ``workflow_type`` sends to another: the sender
        goes on as if it was delivered (what a signal to a workflow then unreachable leaves)."""
        lost = LostSignal(workflow_type, signal)
        self.lost.append(lost)
        return lost

    def open_all(self) -> None:
        """Open every gate (a test's cleanup: a held activity would keep its worker up)."""
        for gate in self.gates:
            gate.open()

    def intercept_activity(self, next: ActivityInboundInterceptor) -> ActivityInboundInterceptor:
        return _HeldActivity(next, self)

    def workflow_interceptor_class(
        self, input: WorkflowInterceptorClassInput
    ) -> type[WorkflowInboundInterceptor] | None:
        failures, lost = self.failures, self.lost

        class _Inbound(WorkflowInboundInterceptor):
            def init(self, outbound: WorkflowOutboundInterceptor) -> None:
                super().init(_FailingOutbound(outbound, failures, lost))

        return _Inbound


class _HeldActivity(ActivityInboundInterceptor):
    def __init__(self, next: ActivityInboundInterceptor, gates: Gates) -> None:
        super().__init__(next)
        self._gates = gates

    async def execute_activity(self, input: ExecuteActivityInput) -> Any:
        info = activity.info()
        for gate in self._gates.gates:
            if not gate.opened.is_set() and gate.match(info, input.args):
                await gate.pass_()
        return await super().execute_activity(input)


class _FailingOutbound(WorkflowOutboundInterceptor):
    def __init__(
        self,
        next: WorkflowOutboundInterceptor,
        failures: list[TaskFailure],
        lost: list[LostSignal],
    ) -> None:
        super().__init__(next)
        self._failures = failures
        self._lost = lost

    def _fail_before(self, activity_name: str) -> None:
        info = workflow.info()
        for failure in self._failures:
            if (
                info.workflow_type == failure.workflow_type
                and activity_name == failure.local_activity
                and info.workflow_id not in failure.failed
            ):
                failure.failed.append(info.workflow_id)
                # Not a Temporal failure: the SDK fails the workflow task, and Temporal retries
                # it from the last completed task, as after a crash.
                raise RuntimeError(f"test: workflow task failed before {activity_name}")

    def start_local_activity(self, input: StartLocalActivityInput) -> workflow.ActivityHandle[Any]:
        self._fail_before(input.activity)
        return super().start_local_activity(input)

    def start_activity(self, input: StartActivityInput) -> workflow.ActivityHandle[Any]:
        self._fail_before(input.activity)
        return super().start_activity(input)

    async def signal_external_workflow(self, input: SignalExternalWorkflowInput) -> None:
        self._fail_before(f"signal:{input.signal}")
        info = workflow.info()
        for lost in self._lost:
            if info.workflow_type == lost.workflow_type and input.signal == lost.signal:
                if info.workflow_id not in lost.senders:
                    lost.senders.append(info.workflow_id)
                return
        await super().signal_external_workflow(input)


@asynccontextmanager
async def gated_worker(client: Client, stack: Stack, gates: Gates) -> AsyncIterator[Harness]:
    """A worker answering ``ack: <message>`` with ``gates`` armed; every gate opens at the end,
    so a held activity never keeps the worker from shutting down."""
    rules = [ScriptRule(reply="ack: {last}")]
    async with running_worker(with_gates(client, gates), stack, rules=rules) as running:
        try:
            yield running
        finally:
            gates.open_all()


def with_gates(client: Client, gates: Gates) -> Client:
    """``client`` with ``gates`` among its interceptors (a worker built on it uses them)."""
    config = client.config()
    config["interceptors"] = [*config["interceptors"], gates]
    return Client(**config)


async def history(client: Client, workflow_id: str) -> list[HistoryEvent]:
    """The events of the workflow's latest run."""
    return list((await client.get_workflow_handle(workflow_id).fetch_history()).events)


def signals_received(events: Sequence[HistoryEvent], name: str, mentioning: str) -> list[int]:
    """Positions of the ``name`` signals the workflow received whose input mentions a text."""
    found = []
    for i, e in enumerate(events):
        if e.event_type != EventType.EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED:
            continue
        attributes = e.workflow_execution_signaled_event_attributes
        payloads = attributes.input.payloads
        if attributes.signal_name == name and any(mentioning.encode() in p.data for p in payloads):
            found.append(i)
    return found


def signals_delivered(events: Sequence[HistoryEvent], name: str, to: str) -> list[int]:
    """Positions where a ``name`` signal the workflow sent to ``to`` was delivered."""
    initiated = set()
    for e in events:
        if e.event_type != EventType.EVENT_TYPE_SIGNAL_EXTERNAL_WORKFLOW_EXECUTION_INITIATED:
            continue
        attributes = e.signal_external_workflow_execution_initiated_event_attributes
        if attributes.signal_name == name and attributes.workflow_execution.workflow_id == to:
            initiated.add(e.event_id)
    return [
        i
        for i, e in enumerate(events)
        if e.event_type == EventType.EVENT_TYPE_EXTERNAL_WORKFLOW_EXECUTION_SIGNALED
        and e.external_workflow_execution_signaled_event_attributes.initiated_event_id in initiated
    ]
