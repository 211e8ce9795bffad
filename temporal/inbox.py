"""Client-side access to an agent's inbox: submit, deliver, ask for a marker.

Used by the CLI, by channel adapters and by tests; integrators in other languages do the same
with any Temporal client (see docs/integration.md).
"""

from __future__ import annotations

from typing import Any

from temporalio.api.enums.v1 import TaskQueueType
from temporalio.api.taskqueue.v1 import TaskQueue
from temporalio.api.workflowservice.v1 import DescribeTaskQueueRequest
from temporalio.client import Client, WithStartWorkflowOperation, WorkflowUpdateFailedError
from temporalio.common import WorkflowIDConflictPolicy

from schemas.agents import AgentWorkflowInput
from schemas.events import InboundEvent, MarkerAnswer, MarkerQuery, Receipt, SubmitEventInput
from temporal import names


class SubmitRejectedError(RuntimeError):
    """The agent refused the event; the message says why."""


def _agent_start(handle: str, task_queue: str) -> dict[str, Any]:
    """How ``agent/{handle}`` is started wherever a call may have to start it."""
    return {
        "id": names.agent_workflow_id(handle),
        "task_queue": task_queue,
        "id_conflict_policy": WorkflowIDConflictPolicy.USE_EXISTING,
        "search_attributes": names.search_attributes(agent=handle),
        "static_summary": f"inbox and lock of agent {handle}",
    }


async def submit(client: Client, *, handle: str, event: InboundEvent, task_queue: str) -> Receipt:
    """Send ``event`` to ``agent/{handle}`` (starting the workflow if needed); wait for the receipt.

    The event ID is also the update ID, so a retried submission is answered, not repeated.

    Raises:
        SubmitRejectedError: The agent refused the event.
    """
    try:
        receipt: Receipt = await client.execute_update_with_start_workflow(
            names.SUBMIT,
            SubmitEventInput(event=event),
            start_workflow_operation=WithStartWorkflowOperation(
                "AgentWorkflow",
                AgentWorkflowInput(handle=handle),
                **_agent_start(handle, task_queue),
            ),
            id=event.event_id,
            result_type=Receipt,
        )
    except WorkflowUpdateFailedError as err:
        raise SubmitRejectedError(str(err.cause or err)) from err
    return receipt


async def deliver(client: Client, *, handle: str, event: InboundEvent, task_queue: str) -> None:
    """Fire-and-forget: queue ``event`` with signal-with-start."""
    await client.start_workflow(
        "AgentWorkflow",
        AgentWorkflowInput(handle=handle),
        start_signal=names.DELIVER,
        start_signal_args=[SubmitEventInput(event=event)],
        **_agent_start(handle, task_queue),
    )


async def marker(client: Client, *, handle: str, event_id: str) -> MarkerAnswer:
    """The completion marker of an event, from the agent workflow."""
    answer: MarkerAnswer = await client.get_workflow_handle(names.agent_workflow_id(handle)).query(
        names.MARKER, MarkerQuery(event_id=event_id), result_type=MarkerAnswer
    )
    return answer


async def start_agent(client: Client, *, handle: str, task_queue: str) -> None:
    """Start ``agent/{handle}`` if it is not running (idempotent)."""
    await client.start_workflow(
        "AgentWorkflow", AgentWorkflowInput(handle=handle), **_agent_start(handle, task_queue)
    )


async def has_pollers(client: Client, task_queue: str) -> bool:
    """Whether some worker polls ``task_queue`` for workflow tasks right now."""
    response = await client.workflow_service.describe_task_queue(
        DescribeTaskQueueRequest(
            namespace=client.namespace,
            task_queue=TaskQueue(name=task_queue),
            task_queue_type=TaskQueueType.TASK_QUEUE_TYPE_WORKFLOW,
        )
    )
    return len(response.pollers) > 0
