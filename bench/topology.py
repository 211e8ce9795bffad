"""Persyn's three-workflow shape with no-op steps: what the shape costs before any real work.

A message takes the same path as a real one's (``docs/architecture.md``): a ``submit`` update on
the inbox workflow, which runs a local activity (resolve the speaker) and signals the session;
the session runs a local activity (write the turn through) and starts a step workflow as its
child; the step runs a local activity (assemble context), one regular activity (the model call,
dispatched eagerly), four local activities (plan, screen, transmit, record), signals the inbox
(releasing the update), runs one more (settle) and returns to the session. With
``local_activities=False`` the local activities are left out, so the two variants split the
shape's cost into workflow-task rounds and local-activity overhead. Every activity returns its
input at once; the difference between these figures and a real activation is Persyn's own work.

``direct=True`` measures the alternative the architecture does not take: the inbox starts the
step itself, and the session only hears of the turn afterwards, off the reply's path.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from datetime import timedelta

from temporalio import activity, workflow

from bench.floor import noop


@activity.defn(name="bench.local_noop")
async def local_noop(value: int) -> int:
    """Does nothing (run as a local activity)."""
    return value


async def _locals(count: int, value: int) -> None:
    for _ in range(count):
        await workflow.execute_local_activity(
            local_noop, value, start_to_close_timeout=timedelta(seconds=10)
        )


@dataclass
class Shape:
    """Where one message's workflows run, and whether its steps take their local activities."""

    inbox_id: str
    session_id: str
    local_activities: bool
    direct: bool = False
    """The inbox starts each step itself; the step tells the session afterwards, off the path."""


@dataclass
class StepInput:
    """One message for the step workflow."""

    shape: Shape
    value: int


@workflow.defn(name="BenchStepWorkflow")
class StepWorkflow:
    """The activation's shape: context, model call, four steps, release, settle."""

    @workflow.run
    async def run(self, data: StepInput) -> int:
        """Run the no-op pipeline for one message."""
        las = data.shape.local_activities
        await _locals(1 if las else 0, data.value)
        await workflow.execute_activity(
            noop, data.value, start_to_close_timeout=timedelta(seconds=10)
        )
        await _locals(4 if las else 0, data.value)
        release = workflow.get_external_workflow_handle(data.shape.inbox_id).signal(
            InboxWorkflow.finished, data.value
        )
        if data.shape.direct:
            # The session hears of the turn in the same workflow task as the release.
            await asyncio.gather(
                release,
                workflow.get_external_workflow_handle(data.shape.session_id).signal(
                    SessionWorkflow.heard, data.value
                ),
            )
        else:
            await release
        await _locals(1 if las else 0, data.value)
        return data.value


@workflow.defn(name="BenchSessionWorkflow")
class SessionWorkflow:
    """The conversation's shape: write the turn through, run one step per input, in order."""

    def __init__(self) -> None:
        self._pending: list[int] = []
        self._heard = 0

    @workflow.signal
    def inbound(self, value: int) -> None:
        """Queue an input."""
        self._pending.append(value)

    @workflow.signal
    def heard(self, value: int) -> None:
        """A step the inbox ran itself finished (``direct``): the window would take it here."""
        self._heard += 1

    @workflow.run
    async def run(self, shape: Shape) -> None:
        """Serve inputs until cancelled."""
        if shape.direct:
            await workflow.wait_condition(lambda: False)
        while True:
            await workflow.wait_condition(lambda: bool(self._pending))
            value = self._pending.pop(0)
            await _locals(1 if shape.local_activities else 0, value)
            await workflow.execute_child_workflow(
                StepWorkflow.run,
                StepInput(shape=shape, value=value),
                id=f"{shape.session_id}-step-{value}",
            )


@workflow.defn(name="BenchInboxWorkflow")
class InboxWorkflow:
    """The agent's shape: accept by update, resolve, route, wait for the release."""

    def __init__(self) -> None:
        self._finished: set[int] = set()
        self._shape: Shape | None = None

    @workflow.update
    async def submit(self, value: int) -> int:
        """Route one input and wait until its step releases it."""
        await workflow.wait_condition(lambda: self._shape is not None)
        shape = self._shape
        assert shape is not None
        if shape.direct:
            # Resolve the speaker and write the turn through here, then start the step.
            await _locals(2 if shape.local_activities else 0, value)
            await workflow.start_child_workflow(
                StepWorkflow.run,
                StepInput(shape=shape, value=value),
                id=f"{shape.inbox_id}-step-{value}",
            )
        else:
            await _locals(1 if shape.local_activities else 0, value)
            await workflow.get_external_workflow_handle(shape.session_id).signal(
                SessionWorkflow.inbound, value
            )
        await workflow.wait_condition(lambda: value in self._finished)
        self._finished.discard(value)
        return value

    @workflow.signal
    def finished(self, value: int) -> None:
        """A step left the critical section."""
        self._finished.add(value)

    @workflow.run
    async def run(self, shape: Shape) -> None:
        """Serve updates until cancelled."""
        self._shape = shape
        await workflow.wait_condition(lambda: False)


WORKFLOWS = [InboxWorkflow, SessionWorkflow, StepWorkflow]
ACTIVITIES = [noop, local_noop]
