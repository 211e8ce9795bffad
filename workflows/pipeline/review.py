"""Step: review the reply, the deliberation plan and the decide screen asked in one step.

Both read the stored draft and neither waits on a model, so since the ``reply-steps-joined``
patch the activation asks them together (``activities.deliberation.review``): one local
activity and one read of the draft where there were two of each. When the plan runs critics
inline, the revised draft is screened after them, as before. A review that gives up leaves
both to their own steps, which fail soft or hard as they always did.
"""

from __future__ import annotations

from temporalio import workflow
from temporalio.exceptions import ActivityError

from contract.policies import MESSAGE_PATH_DATABASE, summarized_local
from schemas.activation import ActivationInput, Draft
from schemas.deliberation import DeliberationPlanInput, Review, ReviewInput
from workflows.pipeline.decide import screen_input

with workflow.unsafe.imports_passed_through():
    from activities.deliberation.review import ReviewActivities

PATCH = "reply-steps-joined"
"""Runs recorded before asked the plan and the screen, and transmitted and recorded the reply,
each in a local activity of its own."""


async def review(data: ActivationInput, draft: Draft) -> Review | None:
    """The plan and (unless critics run inline) the screening; ``None`` if the step gave up."""
    try:
        return await workflow.execute_local_activity_method(
            ReviewActivities.review,
            ReviewInput(
                plan=DeliberationPlanInput(
                    agent=data.agent,
                    channel=data.channel,
                    candidate=draft.text,
                    draft_id=draft.draft_id,
                    degraded=draft.degraded,
                    agent_mode=data.deliberation,
                ),
                screen=screen_input(data, draft),
            ),
            **summarized_local(MESSAGE_PATH_DATABASE, "review the reply (plan, screen)"),
        )
    except ActivityError as err:
        workflow.logger.warning("the review gave up; its steps run one by one: %s", err)
        return None
