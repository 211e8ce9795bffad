"""Steps: transmit the reply, then record the outcome and its completion marker.

Runs since the ``reply-steps-joined`` patch do both in one local activity when the reply is
spoken (:func:`send`); a silent outcome is only recorded (:func:`record`).
"""

from __future__ import annotations

from temporalio import workflow

from contract.policies import MESSAGE_PATH_DATABASE, summarized_local
from contract.run_ids import run_start_id, task_stable_id
from schemas.activation import (
    ActivationInput,
    Decision,
    Draft,
    RecordOutcomeInput,
    SendReplyInput,
    SentReply,
    Transmission,
    TransmitInput,
)
from schemas.dialog import DialogTurn
from schemas.events import CompletionMarker, Outcome
from schemas.markers import completion_marker
from workflows.pipeline import shape

with workflow.unsafe.imports_passed_through():
    from activities.channels.transmit import ChannelActivities
    from activities.store import StoreActivities

DEGRADED_OUTCOME_PATCH = "degraded-outcome"
"""Runs recorded before the ``degraded`` outcome existed called a fallback reply ``spoke``."""

STABLE_REPLY_ID_PATCH = "reply-turn-id-from-run-start"
"""Runs recorded before it named the reply turn by the time of the task that transmitted it."""

DEGRADED_REASON = (
    "the model provider kept failing, so the agent sent its safe fallback reply "
    "(the generate activity in the Web UI shows why)"
)


def _transmission(data: ActivationInput, draft: Draft) -> TransmitInput:
    return TransmitInput(
        activation_id=data.activation_id,
        event_id=data.event.event_id,
        agent=data.agent,
        agent_name=data.agent_name,
        conversation_id=data.conversation_id,
        channel=data.channel,
        turn_id=(
            run_start_id()
            if shape.folded(data, STABLE_REPLY_ID_PATCH)
            else task_stable_id(STABLE_REPLY_ID_PATCH)
        ),
        text=draft.text,
        draft_id=draft.draft_id,
        at=workflow.now(),
    )


async def transmit(data: ActivationInput, draft: Draft) -> DialogTurn:
    """Send ``draft`` on the originating channel; returns the recorded reply turn."""
    transmission: Transmission = await workflow.execute_local_activity_method(
        ChannelActivities.transmit,
        _transmission(data, draft),
        **summarized_local(MESSAGE_PATH_DATABASE, "transmit the reply"),
    )
    return transmission.turn


async def send(data: ActivationInput, draft: Draft) -> tuple[DialogTurn, CompletionMarker]:
    """Send ``draft`` and record the spoken outcome in one step; the turn and its marker."""
    sent: SentReply = await workflow.execute_local_activity_method(
        ChannelActivities.send_reply,
        SendReplyInput(
            transmit=_transmission(data, draft),
            trigger=data.event.trigger.value,
            marker=outcome_marker(data, draft, spoke=True),
        ),
        **summarized_local(MESSAGE_PATH_DATABASE, "transmit the reply and record it"),
    )
    return sent.turn, sent.marker


def outcome_marker(
    data: ActivationInput,
    draft: Draft,
    *,
    spoke: bool,
    silence: str | None = None,
    reply: DialogTurn | None = None,
) -> CompletionMarker:
    """The completion marker of this outcome; a spoken one carries ``reply``'s text, if given."""
    outcome = Outcome.SPOKE if spoke else Outcome.SILENT
    # A fallback reply is not a success: say so wherever the outcome shows.
    if spoke and draft.degraded and shape.patched(data, DEGRADED_OUTCOME_PATCH):
        outcome = Outcome.DEGRADED
    reasons = {Outcome.SILENT: silence, Outcome.DEGRADED: DEGRADED_REASON}
    return completion_marker(
        event_id=data.event.event_id,
        outcome=outcome,
        at=workflow.now(),
        activation_id=data.activation_id,
        conversation_id=data.conversation_id,
        text=reply.text if reply is not None else None,
        reason=reasons.get(outcome),
        degraded=draft.degraded,
    )


async def record(
    data: ActivationInput, draft: Draft, decision: Decision, reply: DialogTurn | None
) -> CompletionMarker:
    """Persist the outcome and its completion marker; returns the marker."""
    marker = outcome_marker(
        data, draft, spoke=reply is not None, silence=decision.reason, reply=reply
    )
    await workflow.execute_local_activity_method(
        StoreActivities.record_outcome,
        RecordOutcomeInput(agent=data.agent, trigger=data.event.trigger.value, marker=marker),
        **summarized_local(MESSAGE_PATH_DATABASE, "record the outcome"),
    )
    return marker
