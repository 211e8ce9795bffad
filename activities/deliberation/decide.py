"""The decide step: whether the candidate is transmitted (spec §4 step 6).

Silence is an outcome with a stated reason, never an error. Screening settles what needs no
model: an empty candidate, the safe fallback, a guardrail veto, and short addressed replies.
Everything else (all unaddressed traffic, and substantive addressed replies unless configured
off) goes to the engagement judgment in :mod:`activities.deliberation.judge`.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime

from temporalio import activity

from activities.deliberation.convergence import adds_nothing
from activities.deliberation.guardrails import GuardrailCheck, first_veto
from activities.deliberation.substance import is_substantive
from activities.drafts import with_candidate
from activities.emotion.mood import MoodReader
from schemas.deliberation import (
    ADDRESSED,
    NOT_ADDRESSED,
    NOTHING_TO_ADD,
    DeliberationSettings,
    Screening,
    ScreenInput,
    SpeakBasis,
    Verdict,
)
from schemas.peers import AGENT_SERVICE
from store.db import Database
from store.queries.dialog import own_turns_in_open_conversation

MIN_OWN_TURNS = 1
"""Replies an agent has made to another before its next may be silenced as adding nothing."""


class DecideActivities:
    """The engagement decision: rules and guardrail hooks (the model judgment is separate)."""

    def __init__(
        self,
        settings: DeliberationSettings | None = None,
        guardrails: Sequence[GuardrailCheck] = (),
        *,
        db: Database | None = None,
        mood: MoodReader | None = None,
    ) -> None:
        self._settings = settings or DeliberationSettings()
        self._guardrails = list(guardrails)
        self._db = db  # reads the candidate's draft when the input carries its reference
        self._mood = mood  # the emotional state, which may let an optional request be declined

    @activity.defn(name="deliberation.screen")
    async def screen(self, data: ScreenInput) -> Screening:
        """A verdict from rules and guardrails, or none: then the decide model judges."""
        data = await with_candidate(self._db, data)
        addressed = data.event.addressed
        if not data.candidate.strip():
            return _verdict(False, NOTHING_TO_ADD, SpeakBasis.RULE)
        if data.degraded and not addressed:
            # The fallback apology is for people waiting on an answer, not for bystanders.
            return _verdict(False, NOT_ADDRESSED, SpeakBasis.RULE)
        veto = await first_veto(self._guardrails, data)
        if veto is not None:
            activity.logger.info("guardrail %s vetoed the reply", veto.check)
            vetoed = _verdict(False, veto.reason, SpeakBasis.GUARDRAIL)
            return vetoed.model_copy(update={"guardrail": veto.check[:64]})
        if data.degraded:
            return _verdict(True, ADDRESSED, SpeakBasis.RULE)
        if data.event.channel.service == AGENT_SERVICE:
            # The right to silence between agents (spec §4.5): agreeing or restating ends it.
            echo = adds_nothing(data.candidate, data.event.text)
            if echo is not None and await self._under_way(data):
                return _verdict(False, echo, SpeakBasis.RULE)
        if not addressed:
            return Screening()
        # A state that warrants it lets the workflow ask whether the request is optional.
        mood = (
            await self._mood.declinable(
                agent=data.agent, trigger=data.event.trigger, addressed=True, now=_now()
            )
            if self._mood is not None
            else None
        )
        substantive = is_substantive(
            data.candidate, degraded=False, min_words=self._settings.min_substantive_words
        )
        if self._settings.judge_addressed and substantive:
            return Screening(mood=mood)
        return _verdict(True, ADDRESSED, SpeakBasis.RULE).model_copy(update={"mood": mood})

    async def _under_way(self, data: ScreenInput) -> bool:
        """Whether the agent has spoken often enough here for the talk to have converged.

        On SmolLM2's replies the screen ended 3 of 20 two-agent openings at the first or
        second reply ("Why not? I have a different idea." read as a restatement): an agent's
        first reply in a conversation is sent whatever the screen reads in it.
        """
        if self._db is None:
            return True
        async with self._db.autocommit() as session:
            spoken = await own_turns_in_open_conversation(
                session, agent=data.agent, key=data.event.channel.key
            )
        return spoken >= MIN_OWN_TURNS


def _now() -> datetime:
    return datetime.now(UTC)


def _verdict(speak: bool, reason: str, basis: SpeakBasis) -> Screening:
    return Screening(verdict=Verdict(speak=speak, reason=reason, basis=basis))
