"""An agent's emotional state from the operator's side: how it feels now, and lately."""

from __future__ import annotations

from datetime import UTC, datetime

from activities.emotion.mood import MoodReader
from schemas.emotion import AgentEmotion
from schemas.settings import Settings
from store.queries.agents import get_agent
from usecases.errors import UnknownAgentError
from usecases.store import open_store


async def agent_emotion(
    *, settings: Settings, agent: str, now: datetime | None = None
) -> AgentEmotion:
    """The agent's current state (decayed to ``now``) and its recent trajectory.

    Raises:
        UnknownAgentError: no such agent.
    """
    async with open_store(settings, pool_size=2) as db:
        async with db.session() as session:
            if await get_agent(session, handle=agent) is None:
                raise UnknownAgentError(agent)
        reader = MoodReader(db, settings.emotion)
        return await reader.emotion(agent=agent, now=now or datetime.now(UTC))
