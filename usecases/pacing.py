"""An agent's pacing settings for its channels: what holds, and the operator's overrides."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from schemas.delivery import PacingSettings
from schemas.settings import Settings
from store.queries.agents import get_agent
from store.queries.delivery import pacing_for, set_pacing
from store.tables.delivery import EVERY_CHANNEL
from usecases.errors import UnknownAgentError, UseCaseError
from usecases.store import open_store


def parse_values(pairs: list[str]) -> dict[str, Any]:
    """``name=value`` pairs as pacing settings; ``none`` clears a limit.

    Raises:
        UseCaseError: A pair without ``=``, or a name the pacing settings do not have.
    """
    fields = PacingSettings.model_fields
    values: dict[str, Any] = {}
    for pair in pairs:
        name, sep, raw = pair.partition("=")
        name = name.strip()
        if not sep or name not in fields:
            known = ", ".join(sorted(fields))
            raise UseCaseError(f"{pair!r} is not name=value with a name among: {known}")
        value = raw.strip()
        if name == "paced_services":
            values[name] = [s.strip() for s in value.split(",") if s.strip()]
        else:
            values[name] = None if value.lower() == "none" else value
    return values


async def show_pacing(
    *, settings: Settings, agent: str, channel: str | None = None
) -> PacingSettings:
    """The pacing that holds for the agent on ``channel`` (all channels: its own defaults).

    Raises:
        UnknownAgentError: No agent has this handle.
    """
    async with open_store(settings, pool_size=1) as db, db.session() as session:
        if await get_agent(session, handle=agent) is None:
            raise UnknownAgentError(agent)
        return await pacing_for(
            session, agent=agent, channel_key=channel or EVERY_CHANNEL, defaults=settings.pacing
        )


async def override_pacing(
    *, settings: Settings, agent: str, values: dict[str, Any], channel: str | None = None
) -> PacingSettings:
    """Store overrides for the agent on ``channel`` (or every channel); returns what holds.

    Raises:
        UnknownAgentError: No agent has this handle.
        pydantic.ValidationError: A value the pacing settings refuse.
    """
    async with open_store(settings, pool_size=1) as db, db.session() as session:
        if await get_agent(session, handle=agent) is None:
            raise UnknownAgentError(agent)
        key = channel or EVERY_CHANNEL
        await set_pacing(session, agent=agent, channel_key=key, values=values, at=datetime.now(UTC))
        return await pacing_for(session, agent=agent, channel_key=key, defaults=settings.pacing)
