"""Where the time before the model call goes, read from the workflows' histories.

A message reaches the model through two workflow tasks in two workflows: the agent's inbox
(admission in one local activity: speaker, turn, window, budget, prompt; then the activation
started as its child) and the activation (the model activity scheduled and dispatched eagerly).
Each history event carries the server's time, and the benchmark's clock is the same machine's,
so the path splits into the server's hops (the update or the child start until the next task
reaches the worker) and the worker's tasks (from a task's start to its completion, local
activities included).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC

from temporalio.api.enums.v1 import EventType
from temporalio.api.history.v1 import HistoryEvent
from temporalio.client import Client

from contract import names

SEGMENTS = (
    "submit -> agent task starts",
    "agent task (admitted, activation started)",
    "child start -> activation task starts",
    "activation task (model activity scheduled)",
    "model activity scheduled -> model request",
)
"""The pre-model path's parts, in order; they add up to the pre-model latency."""


@dataclass(frozen=True)
class Mark:
    """One sequential message: when it was sent and what it started."""

    sent: float
    update_id: str
    activation_id: str
    model_request: float


def _at(event: HistoryEvent) -> float:
    return event.event_time.ToDatetime().replace(tzinfo=UTC).timestamp()


class _History:
    """One workflow run's events, indexed by event ID."""

    def __init__(self, events: Sequence[HistoryEvent]) -> None:
        self.events = list(events)
        self.by_id = {e.event_id: e for e in self.events}

    def task_started_before(self, event_id: int) -> HistoryEvent | None:
        """The last workflow task started before ``event_id``."""
        started = [
            e
            for e in self.events
            if e.event_id < event_id and e.event_type == EventType.EVENT_TYPE_WORKFLOW_TASK_STARTED
        ]
        return started[-1] if started else None

    def task_of(self, completed_id: int) -> tuple[HistoryEvent, HistoryEvent]:
        """The (started, completed) events of the task that completed as ``completed_id``."""
        completed = self.by_id[completed_id]
        started_id = completed.workflow_task_completed_event_attributes.started_event_id
        return self.by_id[started_id], completed


async def _events(client: Client, workflow_id: str, run_id: str | None = None) -> _History:
    handle = client.get_workflow_handle(workflow_id, run_id=run_id)
    return _History([e async for e in handle.fetch_history_events()])


def _update_id(event: HistoryEvent) -> str:
    return event.workflow_execution_update_accepted_event_attributes.accepted_request.meta.update_id


def _agent_part(agent: _History, update_id: str, activation_id: str) -> tuple[float, float] | None:
    """When the agent's task that took the update started, and when it started the activation."""
    accepted = next(
        (
            e
            for e in agent.events
            if e.event_type == EventType.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_ACCEPTED
            and _update_id(e) == update_id
        ),
        None,
    )
    if accepted is None:
        return None
    started = agent.task_started_before(accepted.event_id)
    child_id = names.activation_workflow_id(activation_id)
    child = next(
        (
            e
            for e in agent.events
            if e.event_id > accepted.event_id
            and e.event_type == EventType.EVENT_TYPE_START_CHILD_WORKFLOW_EXECUTION_INITIATED
            and e.start_child_workflow_execution_initiated_event_attributes.workflow_id == child_id
        ),
        None,
    )
    if started is None or child is None:
        return None
    attributes = child.start_child_workflow_execution_initiated_event_attributes
    _, completed = agent.task_of(attributes.workflow_task_completed_event_id)
    return _at(started), _at(completed)


async def breakdown(client: Client, handle: str, marks: Sequence[Mark]) -> dict[str, list[float]]:
    """Milliseconds per segment of :data:`SEGMENTS` for each message whose path was found.

    The path is admission's: the agent admits the event and starts the activation in one task.
    """
    agent = await _events(client, names.agent_workflow_id(handle))
    parts: dict[str, list[float]] = {segment: [] for segment in SEGMENTS}
    for mark in marks:
        agent_part = _agent_part(agent, mark.update_id, mark.activation_id)
        if agent_part is None:
            continue
        activation = await _events(client, names.activation_workflow_id(mark.activation_id))
        scheduled = next(
            e
            for e in activation.events
            if e.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED
        )
        act_started, act_completed = activation.task_of(
            scheduled.activity_task_scheduled_event_attributes.workflow_task_completed_event_id
        )
        points = (
            mark.sent,
            *agent_part,
            _at(act_started),
            _at(act_completed),
            mark.model_request,
        )
        for segment, begin, end in zip(SEGMENTS, points[:-1], points[1:], strict=True):
            parts[segment].append((end - begin) * 1000)
    return parts
