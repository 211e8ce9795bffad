"""Client-side access to an agent's inbox: submit, deliver, ask for a marker.

Used by the CLI, by channel adapters and by tests; integrators in other languages do the same
with any Temporal client (see docs/integration.md).
"""

from __future__ import annotations

import asyncio
from typing import Any

from temporalio.api.common.v1 import WorkflowExecution
from temporalio.api.enums.v1 import TaskQueueType
from temporalio.api.enums.v1 import UpdateWorkflowExecutionLifecycleStage as UpdateStage
from temporalio.api.taskqueue.v1 import TaskQueue
from temporalio.api.update.v1 import UpdateRef, WaitPolicy
from temporalio.api.workflowservice.v1 import (
    DeleteWorkflowExecutionRequest,
    DescribeTaskQueueRequest,
    PollWorkflowExecutionUpdateRequest,
)
from temporalio.client import (
    Client,
    WithStartWorkflowOperation,
    WorkflowUpdateFailedError,
    WorkflowUpdateHandle,
    WorkflowUpdateStage,
)
from temporalio.common import WorkflowIDConflictPolicy
from temporalio.exceptions import ApplicationError
from temporalio.service import RPCError, RPCStatusCode

from contract import names
from schemas.agents import AgentWorkflowInput
from schemas.events import (
    ImpulseInput,
    InboundEvent,
    MarkerAnswer,
    MarkerQuery,
    Receipt,
    SubmitEventInput,
    event_digest,
)
from schemas.peers import PeerMessageInput

UNKNOWN_AGENT = "UnknownAgent"
"""The error type the agent workflow refuses a handle with no agent record with."""


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

    The update ID is :func:`update_id`, so a retried submission is answered, not repeated,
    and an event ID reused for a different event reaches the agent, which refuses it. A run
    this call started for a handle with no agent is deleted, so no empty run is left behind.

    Raises:
        SubmitRejectedError: The agent refused the event.
    """
    start: WithStartWorkflowOperation[Any, Any] = WithStartWorkflowOperation(
        names.AGENT_WORKFLOW, AgentWorkflowInput(handle=handle), **_agent_start(handle, task_queue)
    )
    try:
        receipt: Receipt = await client.execute_update_with_start_workflow(
            names.SUBMIT,
            SubmitEventInput(event=event),
            start_workflow_operation=start,
            id=update_id(event),
            result_type=Receipt,
        )
    except WorkflowUpdateFailedError as err:
        cause = err.cause
        if isinstance(cause, ApplicationError) and cause.type == UNKNOWN_AGENT:
            await _delete_ghost(client, start)
        raise SubmitRejectedError(str(cause or err)) from err
    except Exception:
        await _read_start_error(start)
        raise
    return receipt


async def peer(client: Client, *, handle: str, message: PeerMessageInput, task_queue: str) -> None:
    """Internal: hand another agent's message to ``agent/{handle}``; returns once it is accepted.

    Only the ``agent`` channel adapter calls this. The update ID is the sender's outbox row, so
    a retried delivery is answered by Temporal and the recipient takes the message once.

    Raises:
        SubmitRejectedError: The recipient refused the message (no such agent, bad input).
    """
    await _start_accepted(
        client,
        handle=handle,
        task_queue=task_queue,
        update=names.PEER,
        argument=message,
        update_id=f"peer-{message.message_id}",
    )


async def start_submit(
    client: Client, *, handle: str, event: InboundEvent, task_queue: str
) -> WorkflowUpdateHandle[Receipt]:
    """Like :func:`submit`, but return once the agent has accepted the event, not answered it.

    The handle's ``result()`` is the receipt. For channels that answer the sender at once and
    show the reply later (the web channel's ``202 Accepted``).

    Raises:
        SubmitRejectedError: The agent refused the event.
    """
    return await _start_accepted(
        client,
        handle=handle,
        task_queue=task_queue,
        update=names.SUBMIT,
        argument=SubmitEventInput(event=event),
        update_id=update_id(event),
    )


async def _start_accepted(
    client: Client, *, handle: str, task_queue: str, update: str, argument: Any, update_id: str
) -> WorkflowUpdateHandle[Receipt]:
    """Send ``update`` with update-with-start and return once the agent has accepted it.

    Raises:
        SubmitRejectedError: The agent's validator refused it; an agent that does not exist
            leaves no run behind.
    """
    start: WithStartWorkflowOperation[Any, Any] = WithStartWorkflowOperation(
        names.AGENT_WORKFLOW, AgentWorkflowInput(handle=handle), **_agent_start(handle, task_queue)
    )
    try:
        accepted: WorkflowUpdateHandle[Receipt] = await client.start_update_with_start_workflow(
            update,
            argument,
            start_workflow_operation=start,
            wait_for_stage=WorkflowUpdateStage.ACCEPTED,
            id=update_id,
            result_type=Receipt,
        )
        if await _settled(client, accepted):
            # Refused by the validator (or answered already): its outcome says which.
            await accepted.result()
    except WorkflowUpdateFailedError as err:
        cause = err.cause
        if isinstance(cause, ApplicationError) and cause.type == UNKNOWN_AGENT:
            await _delete_ghost(client, start)
        raise SubmitRejectedError(str(cause or err)) from err
    except Exception:
        await _read_start_error(start)
        raise
    return accepted


async def _read_start_error(start: WithStartWorkflowOperation[Any, Any]) -> None:
    """Read the error a failed call left on its start operation, which the call raised too.

    Unread, asyncio prints it as a second traceback ("Future exception was never retrieved")
    when the operation is collected: on the terminal of whoever ran ``persyn send`` while
    Temporal was down. One step of the loop settles it when the SDK has set it; a start that
    was never attempted has nothing to read, and the wait for it is dropped.
    """
    waiting = asyncio.ensure_future(start.workflow_handle())
    await asyncio.sleep(0)
    if not waiting.done():
        waiting.cancel()
    elif not waiting.cancelled():
        waiting.exception()


async def _settled(client: Client, update: WorkflowUpdateHandle[Receipt]) -> bool:
    """Whether the update already has an outcome (a validator's refusal is one).

    Starting an update returns its handle whether the validator accepted or refused it, and
    the server keeps no record of a refused update: one non-blocking poll tells them apart.
    The handle itself carries a refusal's reason.
    """
    try:
        answer = await client.workflow_service.poll_workflow_execution_update(
            PollWorkflowExecutionUpdateRequest(
                namespace=client.namespace,
                update_ref=UpdateRef(
                    workflow_execution=WorkflowExecution(
                        workflow_id=update.workflow_id, run_id=update.workflow_run_id or ""
                    ),
                    update_id=update.id,
                ),
                identity=client.identity,
                wait_policy=WaitPolicy(
                    lifecycle_stage=UpdateStage.UPDATE_WORKFLOW_EXECUTION_LIFECYCLE_STAGE_ACCEPTED
                ),
            )
        )
    except RPCError as err:
        if err.status == RPCStatusCode.NOT_FOUND:
            return True  # refused by the validator
        raise
    return answer.HasField("outcome")


def update_id(event: InboundEvent) -> str:
    """The update ID of a submission: the event ID plus a fingerprint of what it says.

    Temporal answers a repeated update ID from its first result without reading the payload.
    With the fingerprint in the ID, a true retry is still answered by Temporal, and an event
    ID reused for different content reaches the agent, which refuses it as a conflict.
    """
    return f"{event.event_id}-{event_digest(event)[:12]}"


async def _delete_ghost(client: Client, start: WithStartWorkflowOperation[Any, Any]) -> None:
    """Delete the run started for a handle that names no agent (it did nothing).

    Temporal deletes asynchronously: the run disappears from describe and lists shortly after.
    """
    try:
        handle = await start.workflow_handle()
        await client.workflow_service.delete_workflow_execution(
            DeleteWorkflowExecutionRequest(
                namespace=client.namespace,
                # That run only: never whatever runs under the ID by the time this arrives.
                workflow_execution=WorkflowExecution(
                    workflow_id=handle.id, run_id=handle.first_execution_run_id or ""
                ),
            )
        )
    except RPCError:
        pass  # best effort: the run completed on its own and holds nothing


async def deliver(client: Client, *, handle: str, event: InboundEvent, task_queue: str) -> None:
    """Fire-and-forget: queue ``event`` with signal-with-start."""
    await client.start_workflow(
        names.AGENT_WORKFLOW,
        AgentWorkflowInput(handle=handle),
        start_signal=names.DELIVER,
        start_signal_args=[SubmitEventInput(event=event)],
        **_agent_start(handle, task_queue),
    )


async def impulse(client: Client, *, handle: str, impulse: ImpulseInput, task_queue: str) -> None:
    """Internal: queue a heartbeat or reminder firing (signal-with-start on ``impulse``).

    Only the schedule-started workflows' deliver activity calls this; clients use
    :func:`submit` or :func:`deliver`, which cannot carry an internal trigger.
    """
    await client.start_workflow(
        names.AGENT_WORKFLOW,
        AgentWorkflowInput(handle=handle),
        start_signal=names.IMPULSE,
        start_signal_args=[impulse],
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
        names.AGENT_WORKFLOW, AgentWorkflowInput(handle=handle), **_agent_start(handle, task_queue)
    )


# A busy server can answer a task-queue read with CANCELLED while matching loads the queue's
# partition (seen right after a worker starts on a fresh queue); the read is safe to repeat.
_TRANSIENT = (RPCStatusCode.CANCELLED, RPCStatusCode.DEADLINE_EXCEEDED, RPCStatusCode.UNAVAILABLE)
_PAUSES = (0.25, 0.5, 1.0)


async def has_pollers(client: Client, task_queue: str) -> bool:
    """Whether some worker polls ``task_queue`` for workflow tasks right now.

    A transient server answer is read again after a short pause, three times at most.
    """
    request = DescribeTaskQueueRequest(
        namespace=client.namespace,
        task_queue=TaskQueue(name=task_queue),
        task_queue_type=TaskQueueType.TASK_QUEUE_TYPE_WORKFLOW,
    )
    for pause in _PAUSES:
        try:
            response = await client.workflow_service.describe_task_queue(request)
            return len(response.pollers) > 0
        except RPCError as err:
            if err.status not in _TRANSIENT:
                raise
        await asyncio.sleep(pause)
    response = await client.workflow_service.describe_task_queue(request)
    return len(response.pollers) > 0
