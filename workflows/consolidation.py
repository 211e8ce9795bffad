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
from typing import Any

from temporalio import workflow
from temporalio.exceptions import ActivityError

from schemas.memory_formation import (
    ClaimedFormation,
    ClaimFormationsInput,
    ConsolidationInput,
    ConsolidationResult,
    FormationFailure,
    FormationStep,
    IndexDialogInput,
)
from temporal import attribution
from workflows.policies import DATABASE, DATABASE_RETRY, MODEL_CALL

with workflow.unsafe.imports_passed_through():
    from activities.memory.consolidate import ConsolidationActivities
    from activities.memory.retention import RetentionActivities

ENCODER_STEP: dict[str, Any] = {
    "start_to_close_timeout": timedelta(minutes=5),
    "schedule_to_close_timeout": timedelta(minutes=30),
    "retry_policy": DATABASE_RETRY,
}
"""A step that may call the encoder (which fails soft inside) and writes to PostgreSQL."""

PREDECESSOR_WAIT = timedelta(minutes=10)
"""Longest a range waits for earlier ones to form; after that it forms without them."""

# Ranges of one compartment rarely form at once (a conversation's chunks are minutes apart);
# when they do, a short poll keeps the wait close to the predecessor's own duration.
_FIRST_POLL = timedelta(milliseconds=250)
_LONGEST_POLL = timedelta(seconds=2)


@workflow.defn(name="ConsolidationWorkflow")
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
            summary="claim the ranges to remember",
            **DATABASE,
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
            summary="fill missing vectors",
            **ENCODER_STEP,
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
                summary="remember it in my own words",
                **MODEL_CALL,
            )
            if summary.turns == 0:
                result.empty += 1
                return
            outcomes = await asyncio.gather(
                workflow.execute_activity_method(
                    ConsolidationActivities.rate, step, summary="rate its importance", **MODEL_CALL
                ),
                workflow.execute_activity_method(
                    ConsolidationActivities.classify,
                    step,
                    summary="classify emotion, sensitivity and topics",
                    **MODEL_CALL,
                ),
                return_exceptions=True,
            )
            for outcome in outcomes:
                if isinstance(outcome, BaseException):
                    raise outcome
            stored = await workflow.execute_activity_method(
                ConsolidationActivities.store, step, summary="store the memory", **ENCODER_STEP
            )
        except ActivityError as err:
            # The range stays un-consolidated (its dialog untouched) for a later run.
            workflow.logger.warning("formation %s failed: %s", item.formation_id, err.cause or err)
            await workflow.execute_local_activity_method(
                ConsolidationActivities.fail,
                FormationFailure(
                    formation_id=item.formation_id, error=str(err.cause or err)[:1000]
                ),
                summary="leave the range for later",
                **DATABASE,
            )
            result.failed.append(item.formation_id)
            return
        result.formed.append(stored.record_id)

    async def _after_predecessors(self, step: FormationStep) -> None:
        """Wait, with a deadline, until earlier ranges formed elsewhere are done."""
        deadline = workflow.now() + PREDECESSOR_WAIT
        delay = _FIRST_POLL
        while True:
            pending = await workflow.execute_local_activity_method(
                ConsolidationActivities.predecessors,
                step,
                summary="earlier memories still forming?",
                **DATABASE,
            )
            if pending.running == 0 or workflow.now() >= deadline:
                return
            await workflow.sleep(delay, summary="wait for earlier memories to form")
            delay = min(delay * 2, _LONGEST_POLL)
