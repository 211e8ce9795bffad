"""``ConsolidationWorkflow``: a stretch of dialog becomes first-person memory records.

Lifecycle: started as ``consolidation/{ulid}`` by a conversation (a child with ``ABANDON``,
never awaited: every ``chunk_tokens`` while it runs and once when it closes) or by maintenance
(a sweep with no range of its own). It claims its range and up to ``pickup_limit`` ranges whose
earlier consolidation failed, then forms each, oldest first: wait (briefly) for earlier ranges
of the same compartment still being formed elsewhere, so each memory forms beside the ones
before it; summarize; rate and classify concurrently; store. A range whose steps fail after
their retries is marked failed and left for a later consolidation; its dialog stays in
PostgreSQL. Finally it fills missing vectors (fail soft) and ends. No messages; it never
continues as new (a run handles a few ranges).
"""

from __future__ import annotations

import asyncio
from datetime import timedelta

from temporalio import workflow
from temporalio.exceptions import ActivityError

from contract import attribution, names
from contract.policies import DATABASE, ENCODER_STEP, MODEL_CALL, summarized, summarized_local
from schemas.memory_formation import (
    ClaimedFormation,
    ClaimFormationsInput,
    ConsolidationInput,
    ConsolidationResult,
    FormationFailure,
    FormationStep,
    IndexDialogInput,
)

with workflow.unsafe.imports_passed_through():
    from activities.memory.consolidate import ConsolidationActivities
    from activities.memory.retention import RetentionActivities

PREDECESSOR_WAIT = timedelta(minutes=10)
"""Longest a range waits for earlier ones to form; after that it forms without them."""

# Ranges of one compartment rarely form at once (a conversation's chunks are minutes apart);
# when they do, a short poll keeps the wait close to the predecessor's own duration.
_FIRST_POLL = timedelta(milliseconds=250)
_LONGEST_POLL = timedelta(seconds=2)


@workflow.defn(name=names.CONSOLIDATION_WORKFLOW)
class ConsolidationWorkflow:
    """Claims ranges of dialog and forms one memory record from each."""

    @workflow.run
    async def run(self, data: ConsolidationInput) -> ConsolidationResult:
        """Form the claimed ranges, then fill missing vectors."""
        attribution.bind(
            agent=data.agent,
            channel=data.channel.key if data.channel else None,
            conversation=data.range.conversation_id if data.range else None,
        )
        result = ConsolidationResult(consolidation_id=data.consolidation_id)
        claimed = await workflow.execute_local_activity_method(
            ConsolidationActivities.claim,
            ClaimFormationsInput(
                consolidation_id=data.consolidation_id,
                agent=data.agent,
                channel=data.channel,
                range=data.range,
                pickup_limit=data.pickup_limit,
            ),
            **summarized_local(DATABASE, "claim the ranges to remember"),
        )
        for number, item in enumerate(claimed.formations, start=1):
            attribution.bind(conversation=item.conversation_id)
            workflow.set_current_details(
                f"{data.agent}: forming memory {number} of {len(claimed.formations)} "
                f"(formation {item.formation_id}{', a retry' if item.picked_up else ''})"
            )
            await self._form(item, result)
        indexed = await workflow.execute_activity_method(
            RetentionActivities.index,
            IndexDialogInput(agent=data.agent),
            **summarized(ENCODER_STEP, "fill missing vectors"),
        )
        result.turns_indexed = indexed.turns
        workflow.set_current_details(
            f"{data.agent}: formed {len(result.formed)}, failed {len(result.failed)}"
        )
        return result

    async def _form(self, item: ClaimedFormation, result: ConsolidationResult) -> None:
        step = FormationStep(formation_id=item.formation_id)
        await self._after_predecessors(step)
        try:
            summary = await workflow.execute_activity_method(
                ConsolidationActivities.summarize,
                step,
                **summarized(MODEL_CALL, "remember it in my own words"),
            )
            if summary.turns == 0:
                result.empty += 1
                return
            outcomes = await asyncio.gather(
                workflow.execute_activity_method(
                    ConsolidationActivities.rate,
                    step,
                    **summarized(MODEL_CALL, "rate its importance"),
                ),
                workflow.execute_activity_method(
                    ConsolidationActivities.classify,
                    step,
                    **summarized(MODEL_CALL, "classify emotion, sensitivity and topics"),
                ),
                return_exceptions=True,
            )
            for outcome in outcomes:
                if isinstance(outcome, BaseException):
                    raise outcome
            stored = await workflow.execute_activity_method(
                ConsolidationActivities.store, step, **summarized(ENCODER_STEP, "store the memory")
            )
        except ActivityError as err:
            # The range stays un-consolidated (its dialog untouched) for a later run.
            workflow.logger.warning("formation %s failed: %s", item.formation_id, err.cause or err)
            await workflow.execute_local_activity_method(
                ConsolidationActivities.fail,
                FormationFailure(
                    formation_id=item.formation_id, error=str(err.cause or err)[:1000]
                ),
                **summarized_local(DATABASE, "leave the range for later"),
            )
            result.failed.append(item.formation_id)
            return
        result.formed.append(stored.record_id)

    async def _after_predecessors(self, step: FormationStep) -> None:
        """Wait until earlier ranges formed elsewhere are done, pausing ``PREDECESSOR_WAIT`` in all.

        The pauses are counted, not ``workflow.now()`` read after the check: that time moves
        with the task the worker runs the code in, and replay must reach the same decision
        (``workflows.steps.Elapsed`` says why).
        """
        delay, waited = _FIRST_POLL, timedelta(0)
        while True:
            pending = await workflow.execute_local_activity_method(
                ConsolidationActivities.predecessors,
                step,
                **summarized_local(DATABASE, "earlier memories still forming?"),
            )
            if pending.running == 0 or waited >= PREDECESSOR_WAIT:
                return
            await workflow.sleep(delay, summary="wait for earlier memories to form")
            waited += delay
            delay = min(delay * 2, _LONGEST_POLL)
