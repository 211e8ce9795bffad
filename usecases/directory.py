"""One agent's directory from a client: open the store, check the agent, run one step.

The contact, channel and people use cases each run their query in one session through
:func:`in_agent`, so a mistyped handle is refused the same way everywhere and before anything
is read or written.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TypeVar

from sqlmodel.ext.asyncio.session import AsyncSession

from schemas.ids import check_handle
from schemas.settings import Settings
from store.tables import Agent
from usecases.errors import UnknownAgentError
from usecases.store import open_store

T = TypeVar("T")


async def in_agent(
    settings: Settings, agent: str, act: Callable[[AsyncSession], Awaitable[T]]
) -> T:
    """Run ``act`` in one session (each write commits itself), after checking the agent exists.

    Raises:
        UnknownAgentError: no such agent.
    """
    check_handle(agent)
    async with open_store(settings, pool_size=2) as db, db.session() as session:
        if await session.get(Agent, agent) is None:
            raise UnknownAgentError(agent)
        return await act(session)
