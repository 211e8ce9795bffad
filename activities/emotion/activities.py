"""The emotion activities: classify the state after an exchange, weigh an optional request.

``emotion.classify`` runs after the reply is out (the activation calls it last), so it never
delays a reply; whatever goes wrong, it records nothing and the agent goes on. A classifier
answer that is not a clean distribution is refused (:mod:`activities.emotion.classifier`).
``emotion.weigh_request`` runs only when the screen found a state that warrants declining:
a fast model says whether the request is an optional favour, and only a clear yes declines.
"""

from __future__ import annotations

import asyncio
import secrets
from datetime import timedelta

from temporalio import activity

from activities.emotion.classifier import (
    EmotionReplyError,
    classifier_request,
    optional_request,
    parse_distribution,
    parse_optional,
)
from activities.emotion.mood import MoodReader, decline_reason
from activities.emotion.state import decayed, top_of
from activities.gateway.activity_call import complete
from activities.gateway.gateway import ModelGateway
from schemas.deliberation import Screening, SpeakBasis, Verdict
from schemas.dialog import DialogTurn
from schemas.emotion import (
    ClassifyEmotionInput,
    EmotionClassified,
    EmotionReadingPublic,
    EmotionSettings,
    WeighRequestInput,
)
from schemas.ids import ulid_from_parts
from schemas.models import TaskType
from schemas.text import estimate_tokens
from store.db import Database
from store.queries.agents import get_agent
from store.queries.dialog import load_turns
from store.queries.emotion import keep_reading, latest_readings, reading_for


def _latest(turns: list[DialogTurn], budget: int | None) -> list[DialogTurn]:
    """The newest turns that fit ``budget`` tokens (always the last one)."""
    if budget is None:
        return turns
    kept: list[DialogTurn] = []
    used = 0
    for turn in reversed(turns):
        used += estimate_tokens(turn.text)
        if kept and used > budget:
            break
        kept.append(turn)
    return list(reversed(kept))


class EmotionActivities:
    """The classifier after each exchange and the optional-request judgment."""

    def __init__(self, db: Database, gateway: ModelGateway, settings: EmotionSettings) -> None:
        self._db = db
        self._gateway = gateway
        self._settings = settings
        self.mood = MoodReader(db, settings)

    def _skip(self, why: str) -> EmotionClassified:
        activity.logger.info("no emotion reading: %s", why)
        return EmotionClassified(recorded=False, skipped=why)

    @activity.defn(name="emotion.classify")
    async def classify(self, data: ClassifyEmotionInput) -> EmotionClassified:
        """Classify and store the agent's state at the end of the exchange.

        Raises:
            ApplicationError: A provider failure (retried; the activation then goes on).
        """
        if not self._settings.enabled:
            return self._skip("emotion.enabled is off")
        if not self._gateway.runs(TaskType.EMOTION):
            return self._skip("the call plan skips the emotion stage")
        ids = [*data.window_turn_ids[-self._settings.classifier_turns :]]
        if data.reply_turn_id is not None and data.reply_turn_id not in ids:
            ids.append(data.reply_turn_id)
        done = await reading_for(self._db.lane, activation_id=data.activation_id)
        if done is not None:
            return EmotionClassified(recorded=True, top=done.top, probability=done.probability)
        name = data.agent_name
        if name is None:  # an input recorded before activations carried the name
            async with self._db.autocommit() as session:
                agent = await get_agent(session, handle=data.agent)
            name = agent.name if agent is not None else None
        turns, before = await asyncio.gather(
            load_turns(self._db.lane, turn_ids=ids),
            latest_readings(self._db.lane, agent=data.agent, limit=1, until=data.at),
        )
        if name is None or not turns:
            return self._skip("no agent or no turns to read")
        budget = self._gateway.registry.plan(
            self._gateway.registry.binding(TaskType.EMOTION).provider
        ).stage(TaskType.EMOTION)
        request = classifier_request(
            name=name,
            turns=_latest(turns, budget.max_transcript_tokens),
            before=decayed(before[-1] if before else None, data.at, self._settings),
        )
        response = await complete(self._gateway, request)
        try:
            distribution = parse_distribution(response.text)
        except EmotionReplyError as err:
            activity.logger.warning("emotion classifier answer refused: %s", err)
            return self._skip(f"the classifier's answer was refused: {err}"[:300])
        top, probability = top_of(distribution)
        reading = EmotionReadingPublic(
            id=ulid_from_parts(data.at, secrets.randbits(80)),
            agent=data.agent,
            conversation_id=data.conversation_id,
            channel_key=data.channel_key,
            activation_id=data.activation_id,
            at=data.at,
            top=top,
            probability=probability,
            distribution=distribution,
        )
        # Long decayed to the baseline: dropping the old readings as each new one is kept keeps
        # the table bounded. One statement: the insert and the prune are each atomic alone, and
        # a retry stores nothing twice.
        cutoff = data.at - timedelta(days=self._settings.keep_days)
        await keep_reading(self._db.lane, reading=reading, prune_before=cutoff)
        return EmotionClassified(recorded=True, top=top, probability=probability)

    @activity.defn(name="emotion.weigh_request")
    async def weigh_request(self, data: WeighRequestInput) -> Screening:
        """A verdict declining the request, citing the state, if the request is optional.

        Raises:
            ApplicationError: A provider failure; the decide step then goes on as usual.
        """
        if not self._gateway.runs(TaskType.DECIDE):
            # A small local model's judgment is not trusted to turn people away.
            return Screening()
        async with self._db.autocommit() as session:
            agent = await get_agent(session, handle=data.agent)
        name = agent.name if agent is not None else data.agent
        response = await complete(self._gateway, optional_request(name=name, text=data.event.text))
        if parse_optional(response.text) is not True:
            return Screening()
        reason = decline_reason(data.mood)
        return Screening(verdict=Verdict(speak=False, reason=reason, basis=SpeakBasis.EMOTION))
