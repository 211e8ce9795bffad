"""Step: decide whether to speak (spec §4 step 6). Silence is an outcome with a reason."""

from __future__ import annotations

from temporalio import workflow

from schemas.activation import ActivationInput, DecideInput, Decision, Draft
from workflows.policies import DATABASE

with workflow.unsafe.imports_passed_through():
    from activities.deliberation.decide import DecideActivities


async def decide(data: ActivationInput, draft: Draft) -> Decision:
    """Whether to transmit ``draft``, and why."""
    return await workflow.execute_local_activity_method(
        DecideActivities.decide,
        DecideInput(
            agent=data.agent, event=data.event, candidate=draft.text, degraded=draft.degraded
        ),
        summary="decide whether to speak",
        **DATABASE,
    )
