"""The agent's side of admission: one local activity, then the activation started directly.

Before admission an event crossed three workflows in turn before its model call: the agent
resolved the speaker and signalled the conversation, the conversation wrote the turn and
started the activation, the activation assembled the prompt; each was a workflow task with a
database step, and the server's hop between each pair another round. Now the agent does all
of it in one local activity (``activities.admission``), then in the same workflow task starts
the activation: the model call waits for the agent's task and the activation's first. The
conversation hears of the turn when its exchange ends (``ExchangeDone.taken``), or at its start
when the turn opened it.

Deterministic: only ``workflow`` APIs.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from temporalio import workflow
from temporalio.exceptions import (
    ActivityError,
    ApplicationError,
    ChildWorkflowError,
    TerminatedError,
)
from temporalio.workflow import ChildWorkflowHandle, ParentClosePolicy

from contract import names
from contract.policies import (
    ACTIVATION_RUN_LIMIT,
    ACTIVATION_TASK_TIMEOUT,
    MESSAGE_STEP,
    summarized_local,
)
from schemas.activation import ActivationInput, ActivationResult
from schemas.admission import AdmitInput, Admitted
from schemas.events import CompletionMarker
from schemas.markers import failed_marker
from workflows.activation import ActivationWorkflow
from workflows.lock import tell_conversation
from workflows.pipeline import termination
from workflows.pipeline.shape import SHAPE
from workflows.steps import Progress, bounded, one_line

with workflow.unsafe.imports_passed_through():
    from activities.admission import AdmissionActivities

PATCH = "admission"
"""Runs recorded before admission resolved the speaker, then routed the event to its
conversation, which wrote the turn and started the activation."""

PATCH_TURN_IN_EXCHANGE = "turn-in-exchange"
"""The conversation hears of an admitted turn with its exchange's end (``ExchangeDone.taken``):
one signal and one conversation workflow task fewer per message. Runs recorded before signalled
``turn_taken`` beside the activation's start."""

ADMIT_STEP = "admit the event"
"""The agent's one step on an event's path (``workflows.steps.bounded``)."""


async def admit(
    data: AdmitInput, *, report: Callable[[Progress | None], None] | None = None
) -> Admitted:
    """Run the admission step, bounded (raises ``StepFailedError`` when it gives up)."""
    return await bounded(
        lambda: workflow.execute_local_activity_method(
            AdmissionActivities.admit, data, **summarized_local(MESSAGE_STEP, ADMIT_STEP)
        ),
        step=ADMIT_STEP,
        doing=f"inbox of agent {data.agent}, event {data.event.event_id}",
        report=report,
    )


def activation_input(
    data: AdmitInput, admitted: Admitted, *, agent_name: str, with_turn: bool
) -> ActivationInput:
    """The activation's input from what admission found.

    ``with_turn``: the activation hands the person's turn to the conversation with the
    exchange's end (``PATCH_TURN_IN_EXCHANGE``), instead of the agent telling it beforehand.
    """
    assert admitted.person_id is not None and admitted.conversation_id is not None
    return ActivationInput(
        activation_id=data.activation_id,
        agent=data.agent,
        agent_name=agent_name,
        conversation_id=admitted.conversation_id,
        channel=data.event.channel,
        event=data.event,
        person_id=admitted.person_id,
        person_name=admitted.person_name,
        participants=admitted.participants,
        window_turn_ids=admitted.window_turn_ids,
        admitted=True,
        prompt=admitted.prompt,
        withheld=admitted.withheld,
        person_turn=admitted.turn if with_turn else None,
        deliberation=admitted.deliberation,
        # Its patches named in its input, not asked as markers (workflows/pipeline/shape.py).
        shape=SHAPE,
    )


def activation_options(data: ActivationInput) -> dict[str, Any]:
    """How an activation is started as a child: its ID, bounds and what the Web UI shows.

    Shared by the agent (here) and by a conversation replaying the path before admission.
    """
    event = data.event
    return {
        "id": names.activation_workflow_id(data.activation_id),
        "task_timeout": ACTIVATION_TASK_TIMEOUT,
        # Temporal ends a hung turn, whatever hangs it (not compared on replay).
        "run_timeout": ACTIVATION_RUN_LIMIT,
        "search_attributes": names.search_attributes(
            agent=data.agent,
            channel=data.channel.key,
            conversation=data.conversation_id,
            trigger=event.trigger.value,
        ),
        "static_summary": f"{data.agent} answers {data.person_name} on {data.channel.key}",
        "static_details": (
            f"event {event.event_id}; trace: persyn trace {data.activation_id}; "
            f"conversation {data.conversation_id}"
        ),
    }


async def start_activation(data: ActivationInput) -> ChildWorkflowHandle[Any, ActivationResult]:
    """Start the activation as the agent's child (abandoned: the agent may continue as new)."""
    return await workflow.start_child_workflow(
        ActivationWorkflow.run,
        data,
        parent_close_policy=ParentClosePolicy.ABANDON,
        **activation_options(data),
    )


async def failure_marker(err: ChildWorkflowError, data: ActivationInput) -> CompletionMarker:
    """The ``failed`` marker of an activation that failed or was terminated, saying why."""
    event = data.event
    marker = failed_marker(
        event.event_id,
        activation_failure(err)[:500],
        at=workflow.now(),
        activation_id=data.activation_id,
        conversation_id=data.conversation_id,
    )
    if isinstance(err.cause, TerminatedError):
        # The operator's reason, so the waiting submitter learns why.
        marker = await termination.record(
            marker, agent=data.agent, trigger=event.trigger, channel=data.channel
        )
    return marker


def activation_failure(err: ChildWorkflowError) -> str:
    """Why an activation failed, naming the step that gave up when one did."""
    cause = err.cause
    if isinstance(cause, ActivityError):
        return f"the activation failed at step '{cause.activity_type}': {one_line(cause)}"
    if isinstance(cause, ApplicationError):
        return f"the activation failed: {one_line(cause)}"
    return f"the activation failed: {cause or err}"


async def tell_conversation_failed(data: ActivationInput) -> None:
    """Tell the conversation its exchange ended with no reply (the activation failed)."""
    await tell_conversation(data, None)
