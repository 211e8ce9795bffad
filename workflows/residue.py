"""``ResidueWorkflow``: what a conversation that just ended left behind, carried forward.

Lifecycle: started as ``residue/{ulid}`` by a conversation as it closes, after its closing
consolidation (a child with ``ABANDON`` at background priority, never on a reply's path). One
step, which fails soft: a pass that fails keeps the items as they were, and they decay on
their own. No messages.
"""

from __future__ import annotations

from temporalio import workflow
from temporalio.exceptions import ActivityError

from contract import attribution, names
from contract.policies import MODEL_CALL, summarized
from schemas.residue import ResidueInput, ResidueResult

with workflow.unsafe.imports_passed_through():
    from activities.residue.synthesis import ResidueActivities


@workflow.defn(name=names.RESIDUE_WORKFLOW)
class ResidueWorkflow:
    """Synthesises the residue of one conversation."""

    @workflow.run
    async def run(self, data: ResidueInput) -> ResidueResult:
        """Run the pass; a failure leaves the items as they were."""
        attribution.bind(agent=data.agent, conversation=data.conversation_id)
        try:
            result: ResidueResult = await workflow.execute_activity_method(
                ResidueActivities.synthesize,
                data,
                **summarized(MODEL_CALL, "note what this conversation left behind"),
            )
        except ActivityError as err:
            workflow.logger.warning("residue pass failed; the items stay as they were: %s", err)
            return ResidueResult(skipped="the pass failed; see the activity's error")
        if result.skipped is not None:
            workflow.set_current_details(f"{data.agent}: {result.skipped}")
        return result
