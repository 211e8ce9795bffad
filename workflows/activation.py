"""``ActivationWorkflow``: one run of the response pipeline (spec §4).

Lifecycle: started by a ``ConversationWorkflow`` as ``activation/{ulid}`` (a fresh ULID, never
reused) for one input; runs receive -> assemble context -> generate -> decide -> transmit ->
record; signals ``activation_finished`` to its agent (releasing the agent's lock) and returns
the reply turn to its conversation. It never continues as new.

Short PostgreSQL steps run as local activities inside the workflow task; the model call is a
regular activity so every attempt is visible and retried with backoff. If generation still
fails after its last attempt the agent sends a safe fallback reply instead of failing.
"""

from __future__ import annotations

from datetime import timedelta

from temporalio import workflow
from temporalio.exceptions import ActivityError

from schemas.activation import (
    FALLBACK_REPLY,
    ActivationFinished,
    ActivationInput,
    ActivationResult,
    AssembleContextInput,
    DecideInput,
    GenerateInput,
    RecordOutcomeInput,
    StreamTarget,
    TransmitInput,
)
from schemas.dialog import DialogTurn
from schemas.events import CompletionMarker, Outcome
from schemas.ids import ulid_from_parts
from temporal import attribution, names
from workflows.policies import DATABASE, MODEL_CALL

with workflow.unsafe.imports_passed_through():
    from activities.channels.transmit import ChannelActivities
    from activities.context.activities import ContextActivities
    from activities.deliberation.decide import DecideActivities
    from activities.generation import GenerationActivities
    from activities.store import StoreActivities

MARKER_TTL = timedelta(hours=1)


@workflow.defn(name="ActivationWorkflow")
class ActivationWorkflow:
    """Receive, retrieve, generate, decide, transmit, record."""

    @workflow.run
    async def run(self, data: ActivationInput) -> ActivationResult:
        """Run the pipeline for one input."""
        event = data.event
        attribution.bind(
            agent=data.agent,
            channel=data.channel.key,
            conversation=data.conversation_id,
            activation=data.activation_id,
            trigger=event.trigger.value,
        )
        workflow.set_current_details(f"Answering {data.person_name} on {data.channel.key}")

        prompt = await workflow.execute_local_activity_method(
            ContextActivities.assemble_context,
            AssembleContextInput(
                activation_id=data.activation_id,
                agent=data.agent,
                conversation_id=data.conversation_id,
                channel=data.channel,
                event=event,
                person_id=data.person_id,
                participants=data.participants,
                window_turn_ids=data.window_turn_ids,
                now=workflow.now(),
            ),
            summary="assemble context",
            **DATABASE,
        )

        degraded = False
        try:
            generation = await workflow.execute_activity_method(
                GenerationActivities.generate,
                GenerateInput(
                    prompt=prompt,
                    stream=StreamTarget(key=event.event_id) if event.stream else None,
                ),
                summary=f"generate a reply for {data.person_name}",
                **MODEL_CALL,
            )
            candidate = generation.text
        except ActivityError as err:
            workflow.logger.warning("generation failed after retries: %s", err.cause or err)
            candidate, degraded = FALLBACK_REPLY, True

        # Seam: counter-perspective critique and refinement (inline or deferred) plug in here.

        decision = await workflow.execute_local_activity_method(
            DecideActivities.decide,
            DecideInput(agent=data.agent, event=event, candidate=candidate, degraded=degraded),
            summary="decide whether to speak",
            **DATABASE,
        )

        reply: DialogTurn | None = None
        if decision.speak:
            transmission = await workflow.execute_local_activity_method(
                ChannelActivities.transmit,
                TransmitInput(
                    activation_id=data.activation_id,
                    event_id=event.event_id,
                    agent=data.agent,
                    agent_name=data.agent_name,
                    conversation_id=data.conversation_id,
                    channel=data.channel,
                    turn_id=ulid_from_parts(workflow.now(), workflow.random().getrandbits(80)),
                    text=candidate,
                    at=workflow.now(),
                ),
                summary="transmit the reply",
                **DATABASE,
            )
            reply = transmission.turn

        now = workflow.now()
        marker = CompletionMarker(
            event_id=event.event_id,
            activation_id=data.activation_id,
            conversation_id=data.conversation_id,
            outcome=Outcome.SPOKE if reply is not None else Outcome.SILENT,
            text=reply.text if reply is not None else None,
            reason=None if reply is not None else decision.reason,
            degraded=degraded,
            completed_at=now,
            expires_at=now + MARKER_TTL,
        )
        await workflow.execute_local_activity_method(
            StoreActivities.record_outcome,
            RecordOutcomeInput(agent=data.agent, trigger=event.trigger.value, marker=marker),
            summary="record the outcome",
            **DATABASE,
        )
        workflow.upsert_search_attributes([names.OUTCOME.value_set(marker.outcome.value)])
        await workflow.get_external_workflow_handle(names.agent_workflow_id(data.agent)).signal(
            names.ACTIVATION_FINISHED, ActivationFinished(marker=marker)
        )
        # Seam: consolidation of this exchange is handed off by the conversation.
        return ActivationResult(marker=marker, reply=reply)
