"""``FoldingWorkflow``: an agent's records fold into recollections, level by level.

Lifecycle: started as ``folding/{handle}`` by the agent's maintenance (a child with
``ABANDON``, at background priority) or by ``persyn memory fold``; one run at a time per agent
(a second start is refused while one runs). It asks which batches are ready (a stream holding
``fold_threshold`` unfolded records of a level), folds them oldest first, one recollection
each, and asks again, since the recollections just written can fill the level above. A fold
that fails after its retries ends the pass: nothing was written for it, and the next
maintenance tries again. After ``FOLDS_PER_RUN`` folds it continues as new. No messages.
"""

from __future__ import annotations

from temporalio import workflow
from temporalio.exceptions import ActivityError

from contract import attribution, names
from contract.policies import DATABASE_ACTIVITY, MODEL_CALL, summarized
from schemas.folding import FoldingInput, FoldingResult, FoldInput, FoldPlanInput
from schemas.ids import ulid_from_parts, ulid_time

with workflow.unsafe.imports_passed_through():
    from activities.memory.folding import FoldingActivities

FOLDS_PER_RUN = 50
"""Folds in one run before it continues as new: a short history for the Web UI and replay."""


@workflow.defn(name=names.FOLDING_WORKFLOW)
class FoldingWorkflow:
    """Folds what is ready, lowest level and oldest first."""

    @workflow.run
    async def run(self, data: FoldingInput) -> FoldingResult:
        """Fold until nothing is ready, a fold fails, or the run has folded its share."""
        attribution.bind(agent=data.agent)
        result = FoldingResult()
        while len(result.folded) + result.skipped < FOLDS_PER_RUN:
            plan = await workflow.execute_activity_method(
                FoldingActivities.fold_plan,
                FoldPlanInput(agent=data.agent),
                **summarized(DATABASE_ACTIVITY, "which memories are ready to fold?"),
            )
            if not plan.batches:
                break
            progressed = False
            for batch in plan.batches:
                if len(result.folded) + result.skipped >= FOLDS_PER_RUN:
                    break
                # The recollection's ID carries its last record's moment, as a memory's does.
                recollection_id = ulid_from_parts(
                    ulid_time(batch.records[-1]), workflow.random().getrandbits(80)
                )
                workflow.set_current_details(
                    f"{data.agent}: folding {len(batch.records)} level-{batch.level} records "
                    f"into {recollection_id} ({data.folded_before + len(result.folded)} so far)"
                )
                try:
                    folded = await workflow.execute_activity_method(
                        FoldingActivities.fold,
                        FoldInput(recollection_id=recollection_id, batch=batch),
                        **summarized(
                            MODEL_CALL,
                            f"fold {len(batch.records)} level-{batch.level} memories into "
                            f"a level-{batch.level + 1} recollection",
                        ),
                    )
                except ActivityError as err:
                    workflow.logger.warning("fold failed; the next maintenance retries: %s", err)
                    return self._done(data, result)
                if folded.recollection_id is None:
                    result.skipped += 1
                    continue
                progressed = True
                result.folded.append(folded.recollection_id)
            if not progressed:
                break
        else:
            result.continued = True
            workflow.continue_as_new(
                FoldingInput(
                    agent=data.agent, folded_before=data.folded_before + len(result.folded)
                )
            )
        return self._done(data, result)

    @staticmethod
    def _done(data: FoldingInput, result: FoldingResult) -> FoldingResult:
        workflow.set_current_details(
            f"{data.agent}: folded {data.folded_before + len(result.folded)} recollections"
        )
        return result
