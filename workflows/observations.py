"""``ObservationWorkflow``: facts about people, learned from a stretch of a conversation.

Lifecycle: started as ``observe/{ulid}`` by a conversation beside each consolidation, for the
same range of turns (a child with ``ABANDON``, never on the reply's path; awaited only when the
conversation closes, as its closing consolidation is). It first grows the knowledge graph
from the range (entities and relations, failing soft), then extracts facts from the range
blind, then reconciles them one at a time, in order, so two facts about one subject in one
range see each other. Every step fails soft: a failed extraction ends the run with nothing
learned, a failed reconciliation skips that fact. Each reconciliation carries the ID its
record will take, chosen here, so a step retried after a worker died finds its own write.
No messages.
"""

from __future__ import annotations

from temporalio import workflow
from temporalio.exceptions import ActivityError

from contract import attribution, names
from contract.policies import MODEL_CALL, summarized
from schemas.graph import ExtractGraphInput
from schemas.ids import ulid_from_parts
from schemas.observations import (
    ExtractInput,
    ObserveInput,
    ObserveResult,
    ReconcileInput,
)

with workflow.unsafe.imports_passed_through():
    from activities.graph.extract import GraphActivities
    from activities.observations.activities import ObservationActivities

PATCH_GRAPH = "graph-extraction"
"""The run grows the knowledge graph before it extracts facts. Deprecated: observations recorded
before it (2026-12-01) skipped that step, and none of them can still be open."""


@workflow.defn(name=names.OBSERVATION_WORKFLOW)
class ObservationWorkflow:
    """Extracts facts from a range of dialog and reconciles each with what is believed."""

    async def _grow_graph(self, data: ObserveInput) -> None:
        """Entities and relations of the same range into the knowledge graph (fails soft)."""
        try:
            await workflow.execute_activity_method(
                GraphActivities.extract,
                ExtractGraphInput(
                    agent=data.agent,
                    conversation_id=data.conversation_id,
                    after_turn=data.after_turn,
                    through_turn=data.through_turn,
                    at=workflow.now(),
                ),
                **summarized(MODEL_CALL, "note who and what this stretch mentions, and how"),
            )
        except ActivityError as err:
            workflow.logger.warning("graph extraction failed; the graph is unchanged: %s", err)

    @workflow.run
    async def run(self, data: ObserveInput) -> ObserveResult:
        """Extract, then reconcile each proposal in order."""
        attribution.bind(agent=data.agent, conversation=data.conversation_id)
        # Deprecated: an observation runs minutes, so none started before the graph is still
        # open (docs/operations.md, "The life of a patch").
        workflow.deprecate_patch(PATCH_GRAPH)
        await self._grow_graph(data)
        result = ObserveResult()
        try:
            extracted = await workflow.execute_activity_method(
                ObservationActivities.extract,
                ExtractInput(
                    agent=data.agent,
                    conversation_id=data.conversation_id,
                    after_turn=data.after_turn,
                    through_turn=data.through_turn,
                ),
                **summarized(MODEL_CALL, "note facts about the people in this stretch"),
            )
        except ActivityError as err:
            workflow.logger.warning("extraction failed; nothing learned: %s", err)
            return result
        result.proposed = len(extracted.proposals)
        if extracted.skipped is not None:  # the plan has it off: said in the Web UI's result
            result.skipped = extracted.skipped
            workflow.set_current_details(f"{data.agent}: {extracted.skipped}")
        for number, proposal in enumerate(extracted.proposals, start=1):
            workflow.set_current_details(
                f"{data.agent}: reconciling fact {number} of {len(extracted.proposals)}"
            )
            observation_id = ulid_from_parts(workflow.now(), workflow.random().getrandbits(80))
            try:
                done = await workflow.execute_activity_method(
                    ObservationActivities.reconcile,
                    ReconcileInput(
                        agent=data.agent, observation_id=observation_id, proposal=proposal
                    ),
                    **summarized(MODEL_CALL, f"reconcile a {proposal.type} fact"),
                )
            except ActivityError as err:
                workflow.logger.warning("reconciliation failed; fact skipped: %s", err)
                result.dropped += 1
                continue
            if done.action == "ADD":
                result.added += 1
            elif done.action == "UPDATE":
                result.updated += 1
            elif done.action == "DELETE":
                result.deleted += 1
            elif done.action == "NOOP":
                result.unchanged += 1
            else:
                result.dropped += 1
        return result
