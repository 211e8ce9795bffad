"""Reading the agent's emotional state: the current state, its trajectory, and the decide gate.

Everything here computes the state as of a moment from the stored readings (no timer), and
fails soft where the reply depends on it: a state that cannot be read is no state.
"""

from __future__ import annotations

import logging
from datetime import datetime

from activities.emotion.state import decayed, declining_emotion
from schemas.emotion import AgentEmotion, EmotionSettings, EmotionStatePublic, MoodNote
from schemas.events import Trigger
from store.db import Database
from store.queries.emotion import latest_here_and_anywhere, latest_readings

log = logging.getLogger(__name__)


def decline_reason(mood: MoodNote) -> str:
    """The first-person reason a declined request is given; it cites the state."""
    return (
        f"I'm going to pass on this one: I'm feeling {mood.emotion.value} right now "
        f"({mood.probability:.2f}, since {mood.since:%Y-%m-%d %H:%M %Z}), and it is an "
        "optional request. Ask me again later, or tell me if it is urgent."
    )


class MoodReader:
    """The agent's emotional state as of a moment, from its stored readings."""

    def __init__(self, db: Database, settings: EmotionSettings) -> None:
        self._db = db
        self._settings = settings

    async def emotion(
        self, *, agent: str, now: datetime, conversation_id: str | None = None
    ) -> AgentEmotion:
        """The current state and the recent trajectory (of one conversation, if given)."""
        newest = await latest_readings(self._db.lane, agent=agent, limit=1, until=now)
        trajectory = await latest_readings(
            self._db.lane,
            agent=agent,
            limit=self._settings.trajectory,
            conversation_id=conversation_id,
            until=now,
        )
        state = decayed(newest[-1] if newest else None, now, self._settings)
        return AgentEmotion(agent=agent, state=state, trajectory=trajectory)

    async def state(self, *, agent: str, now: datetime) -> EmotionStatePublic:
        """The current state alone: one read, for a gate that needs no trajectory."""
        newest = await latest_readings(self._db.lane, agent=agent, limit=1, until=now)
        return decayed(newest[-1] if newest else None, now, self._settings)

    async def in_conversation(
        self, *, agent: str, now: datetime, conversation_id: str
    ) -> AgentEmotion | None:
        """The state with this conversation's trajectory, or ``None`` before the first reading.

        In a conversation with no readings yet, the trajectory is the agent's latest readings.
        The same answer as :meth:`emotion` for the conversation and then for the agent, in one
        statement: the agent's latest readings also give the newest one.
        """
        recent, here = await latest_here_and_anywhere(
            self._db.lane,
            agent=agent,
            conversation_id=conversation_id,
            limit=self._settings.trajectory,
            until=now,
        )
        if not recent:
            return None
        state = decayed(recent[-1], now, self._settings)
        return AgentEmotion(agent=agent, state=state, trajectory=here or recent)

    async def declinable(
        self, *, agent: str, trigger: Trigger, addressed: bool, now: datetime
    ) -> MoodNote | None:
        """A note when the state lets the agent decline an optional request from a person.

        Only a person's message addressed to the agent can be declined this way: a reminder or
        heartbeat is the agent's own business, and unaddressed traffic is not a request.
        """
        if trigger is not Trigger.MESSAGE or not addressed or not self._settings.enabled:
            return None
        try:
            state = await self.state(agent=agent, now=now)
        except Exception:  # the state is optional: the reply goes on without it
            log.warning("could not read the emotional state of %s", agent, exc_info=True)
            return None
        found = declining_emotion(state, self._settings)
        if found is None or state.reading is None:
            return None
        emotion, probability = found
        return MoodNote(emotion=emotion, probability=round(probability, 2), since=state.reading.at)
