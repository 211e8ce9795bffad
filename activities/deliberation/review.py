"""The review step: the deliberation plan and the decide screen of one reply, in one step.

Both read the same draft and neither waits on a model, so the activation asks them together
(one local activity, one read of the draft) instead of one after the other. When the plan runs
critics inline, the screen waits for the revised draft: the review returns the plan alone and
the activation screens after the critics (``workflows.pipeline.decide``).
"""

from __future__ import annotations

from temporalio import activity

from activities.deliberation.decide import DecideActivities
from activities.deliberation.parking import DeliberationActivities
from activities.drafts import with_candidate
from schemas.agents import DeliberationMode
from schemas.deliberation import Review, ReviewInput
from store.db import Database


class ReviewActivities:
    """Plans deliberation and screens the reply in one step."""

    def __init__(
        self, db: Database, deliberation: DeliberationActivities, decide: DecideActivities
    ) -> None:
        self._db = db
        self._deliberation = deliberation
        self._decide = decide

    @activity.defn(name="deliberation.review")
    async def review(self, data: ReviewInput) -> Review:
        """The plan; with it the screening, unless critics run inline first."""
        planning = await with_candidate(self._db, data.plan)
        plan = await self._deliberation.plan(planning)
        if plan.mode is DeliberationMode.INLINE and plan.substantive:
            return Review(plan=plan)
        # The draft's text read once: the screen keeps its reference (a guardrail names the
        # candidate turn by it) and is handed the text.
        screen = data.screen.model_copy(update={"candidate": planning.candidate})
        return Review(plan=plan, screening=await self._decide.screen(screen))
