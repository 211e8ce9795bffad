"""Short PostgreSQL steps of deliberation (local activities): plan, park, settle."""

from __future__ import annotations

from datetime import timedelta

from temporalio import activity

from activities.deliberation.calls import stored_prompt
from activities.deliberation.parked_source import SOURCE, render_conclusion
from activities.deliberation.substance import is_substantive
from activities.drafts import with_candidate
from activities.recent import PROMPTS
from schemas.agents import DeliberationMode
from schemas.deliberation import (
    DeliberationPlan,
    DeliberationPlanInput,
    DeliberationSettings,
    Parked,
    ParkInput,
    Settled,
    SettleInput,
)
from schemas.models import instructions
from store.db import Database
from store.queries.agents import get_agent
from store.queries.deliberation import (
    conclusions_by_id,
    consume_conclusions,
    park_conclusion,
    record_decision,
)
from store.queries.runtime import prompt_extra


class DeliberationActivities:
    """Plans deliberation, parks deferred conclusions and settles each turn."""

    def __init__(
        self, db: Database, settings: DeliberationSettings, *, critique_runs: bool = True
    ) -> None:
        self._db = db
        self._settings = settings
        # False when the critic's provider plan skips critique (a small local model).
        self._critique_runs = critique_runs

    @activity.defn(name="deliberation.plan")
    async def plan(self, data: DeliberationPlanInput) -> DeliberationPlan:
        """The mode on this channel, whether the candidate is substantive, the lens pool."""
        data = await with_candidate(self._db, data)
        default = data.agent_mode
        if default is None:  # an input recorded before admission read the mode
            async with self._db.autocommit() as session:
                agent = await get_agent(session, handle=data.agent)
            default = agent.config.deliberation if agent is not None else DeliberationMode.OFF
        mode = self._settings.mode_for(agent=data.agent, channel=data.channel, default=default)
        return DeliberationPlan(
            mode=mode if self._critique_runs else DeliberationMode.OFF,
            substantive=is_substantive(
                data.candidate,
                degraded=data.degraded,
                min_words=self._settings.min_substantive_words,
            ),
            lenses=list(self._settings.lenses),
            provenance=self._settings.provenance,
        )

    @activity.defn(name="deliberation.park")
    async def park(self, data: ParkInput) -> Parked:
        """Park a deferred conclusion for the next turn on the channel (once per activation)."""
        data = await with_candidate(self._db, data)
        async with self._db.autocommit() as session:
            inserted = await park_conclusion(
                session,
                parked_id=data.parked_id,
                agent=data.agent,
                channel_key=data.channel_key,
                activation_id=data.activation_id,
                conversation_id=data.conversation_id,
                candidate=data.candidate,
                objections=data.objections,
                refined=data.refined,
                created_at=data.at,
                expires_at=data.at + timedelta(hours=self._settings.parked_ttl_hours),
            )
        return Parked(inserted=inserted)

    @activity.defn(name="deliberation.settle")
    async def settle(self, data: SettleInput) -> Settled:
        """Record the decision; if the turn spoke, consume the conclusions woven into it."""
        await record_decision(self._db.lane, settle=data)
        if not data.transmitted:
            return Settled()
        # The prompt's extra first: its text is read only when conclusions were woven into it.
        kept = PROMPTS.get(data.prompt_id)
        if kept is not None:
            extra: dict[str, object] | None = kept.extra
        else:
            async with self._db.autocommit() as session:
                extra = await prompt_extra(session, prompt_id=data.prompt_id)
        woven = (extra or {}).get(SOURCE)
        ids = woven.get("ids") if isinstance(woven, dict) else None
        if not isinstance(ids, list) or not ids:
            return Settled()
        prompt = await stored_prompt(self._db, data.prompt_id)
        async with self._db.autocommit() as session:
            rows = await conclusions_by_id(session, ids=[str(i) for i in ids])
            shown_text = instructions(prompt.system, prompt.messages)
            # Only notes the prompt really held: assembly may have trimmed some to fit.
            shown = [row.id for row in rows if render_conclusion(row) in shown_text]
            consumed = await consume_conclusions(
                session, ids=shown, activation_id=data.activation_id, at=data.at
            )
        return Settled(consumed=consumed)
