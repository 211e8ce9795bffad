"""What the heartbeat and reminder workflows share: claim a firing, then deliver its impulse.

Workflow-side code (deterministic): the impulse's event ID is made from the run's start time
and ``workflow.random()``, so a replay, a retried activity or a retried workflow task refers to
the same firing.
"""

from __future__ import annotations

from temporalio import workflow

from contract import attribution, names
from contract.policies import DATABASE, TEMPORAL_CALL, summarized, summarized_local
from contract.run_ids import run_start_id
from schemas.autonomy import (
    REFLECTION_CHANNEL,
    REMINDER_CHANNEL,
    SELF_SERVICE,
    ClaimFiringInput,
    DeliverImpulseInput,
    Firing,
    FiringInput,
    FiringKind,
    FiringResult,
)

with workflow.unsafe.imports_passed_through():
    from activities.autonomy.firing import FiringActivities


STABLE_IMPULSE_ID_PATCH = "impulse-id-from-run-start"
"""The impulse is named by the run's start time. Deprecated: a firing runs seconds, so none of
the runs that named it by the time of the task that claimed it (before 2026-12-01) is open."""


async def claim(kind: FiringKind, data: FiringInput) -> Firing:
    """Bind attribution, make the impulse's ID and claim the firing."""
    channel = REFLECTION_CHANNEL if kind is FiringKind.HEARTBEAT else REMINDER_CHANNEL
    attribution.bind(agent=data.agent, channel=f"{SELF_SERVICE}:{channel}", trigger=kind.value)
    workflow.upsert_search_attributes([names.AGENT.value_set(data.agent)])
    workflow.deprecate_patch(STABLE_IMPULSE_ID_PATCH)
    event_id = run_start_id()
    firing: Firing = await workflow.execute_local_activity_method(
        FiringActivities.claim_firing,
        ClaimFiringInput(
            kind=kind,
            agent=data.agent,
            reminder_id=data.reminder_id,
            event_id=event_id,
            fired_at=workflow.now(),
        ),
        **summarized_local(DATABASE, f"claim the {kind.value} firing"),
    )
    return firing


async def deliver(kind: FiringKind, data: FiringInput, firing: Firing) -> FiringResult:
    """Put the impulse in the agent's inbox, or report why it was skipped."""
    if not firing.deliver or firing.event_id is None:
        workflow.set_current_details(f"skipped: {firing.reason}")
        return FiringResult(delivered=False, reason=firing.reason)
    await workflow.execute_activity_method(
        FiringActivities.deliver_impulse,
        DeliverImpulseInput(
            kind=kind,
            agent=data.agent,
            event_id=firing.event_id,
            text=firing.text,
            at=workflow.now(),
        ),
        **summarized(TEMPORAL_CALL, f"wake {data.agent}"),
    )
    workflow.set_current_details(f"delivered impulse {firing.event_id} to {data.agent}")
    return FiringResult(delivered=True, event_id=firing.event_id)
