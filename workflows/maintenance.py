"""``MaintenanceWorkflow``: one firing of an agent's ``maintenance/{handle}`` schedule.

Lifecycle: started by the schedule (created with the agent; overlapping firings are skipped)
and ends after one pass: cull low-rated old memories (an audit entry each), drop raw dialog past
its retention window and expired completion markers, fill missing vectors (fail soft), and, if
consolidations failed earlier, start a sweep that retries them (a child with ``ABANDON``).
Where records are ready to fold, it starts the agent's folding pass (``FoldingWorkflow``, a
child with ``ABANDON``; behind the ``folding`` patch). No messages; it never continues as new.
"""

from __future__ import annotations

import asyncio

from temporalio import workflow
from temporalio.workflow import ParentClosePolicy

from contract import attribution, names
from contract.names import consolidation_workflow_id, folding_workflow_id
from contract.policies import BACKGROUND, DATABASE_ACTIVITY, ENCODER_STEP, summarized
from schemas.folding import FoldingInput, FoldPlanInput
from schemas.ids import ulid_from_parts
from schemas.memory_formation import (
    ConsolidationInput,
    CullInput,
    FormationReason,
    IndexDialogInput,
    MaintenanceInput,
    MaintenanceResult,
    PendingFormationsQuery,
    PurgeInput,
)
from workflows.consolidation import ConsolidationWorkflow
from workflows.folding import FoldingWorkflow

with workflow.unsafe.imports_passed_through():
    from activities.memory.folding import FoldingActivities
    from activities.memory.retention import RetentionActivities

FOLDING_PATCH = "folding"
"""Maintenance starts the folding pass (2026-12-05). Firings recorded before run without."""

SWEEP_PICKUP = 10
"""Failed ranges one sweep retries."""


@workflow.defn(name=names.MAINTENANCE_WORKFLOW)
class MaintenanceWorkflow:
    """Culling, retention and repair for one agent."""

    @workflow.run
    async def run(self, data: MaintenanceInput) -> MaintenanceResult:
        """One maintenance pass."""
        attribution.bind(agent=data.agent)
        now = workflow.now()
        culled = await workflow.execute_activity_method(
            RetentionActivities.cull,
            CullInput(agent=data.agent, now=now, actor="maintenance", show=0),
            **summarized(DATABASE_ACTIVITY, "cull low-rated old memories"),
        )
        purged = await workflow.execute_activity_method(
            RetentionActivities.purge,
            PurgeInput(agent=data.agent, now=now),
            **summarized(DATABASE_ACTIVITY, "drop expired dialog and markers"),
        )
        filled = await workflow.execute_activity_method(
            RetentionActivities.index,
            IndexDialogInput(agent=data.agent),
            **summarized(ENCODER_STEP, "fill missing vectors"),
        )
        result = MaintenanceResult(
            culled=culled.count,
            dialog_turns=purged.dialog_turns,
            markers=purged.markers,
            vectors_filled=filled.turns + filled.memories,
        )
        pending = await workflow.execute_activity_method(
            RetentionActivities.pending_formations,
            PendingFormationsQuery(agent=data.agent),
            **summarized(DATABASE_ACTIVITY, "failed consolidations waiting?"),
        )
        if pending.failed:
            result.sweep = await self._sweep(data.agent)
        if workflow.patched(FOLDING_PATCH):
            result.folding = await self._fold(data.agent)
        workflow.set_current_details(
            f"{data.agent}: culled {result.culled}, dropped {result.dialog_turns} turns, "
            f"filled {result.vectors_filled} vectors, sweep {result.sweep or 'none'}, "
            f"folding {result.folding or 'none'}"
        )
        return result

    async def _sweep(self, agent: str) -> str | None:
        sweep_id = ulid_from_parts(workflow.now(), workflow.random().getrandbits(80))
        try:
            await workflow.start_child_workflow(
                ConsolidationWorkflow.run,
                ConsolidationInput(
                    consolidation_id=sweep_id,
                    agent=agent,
                    reason=FormationReason.SWEEP,
                    pickup_limit=SWEEP_PICKUP,
                ),
                id=consolidation_workflow_id(sweep_id),
                parent_close_policy=ParentClosePolicy.ABANDON,
                # Explicit: a schedule made before priorities starts its runs at the default.
                priority=BACKGROUND,
                search_attributes=names.search_attributes(agent=agent),
                static_summary=f"{agent} retries failed consolidations",
            )
        except asyncio.CancelledError:
            raise
        except Exception as err:  # the next firing tries again
            workflow.logger.warning("sweep for %s did not start: %s", agent, err)
            return None
        return sweep_id

    async def _fold(self, agent: str) -> str | None:
        """Start the folding pass when something is ready; its workflow ID, or ``None``."""
        ready = await workflow.execute_activity_method(
            FoldingActivities.fold_plan,
            FoldPlanInput(agent=agent, limit=1),
            **summarized(DATABASE_ACTIVITY, "memories ready to fold?"),
        )
        if not ready.batches:
            return None
        folding_id = folding_workflow_id(agent)
        try:
            await workflow.start_child_workflow(
                FoldingWorkflow.run,
                FoldingInput(agent=agent),
                id=folding_id,
                parent_close_policy=ParentClosePolicy.ABANDON,
                priority=BACKGROUND,
                search_attributes=names.search_attributes(agent=agent),
                static_summary=f"{agent} folds memories into recollections",
            )
        except asyncio.CancelledError:
            raise
        except Exception as err:  # one is running already, or the next firing tries again
            workflow.logger.info("folding for %s did not start: %s", agent, err)
            return None
        return folding_id
