"""Agents: create, read, list."""

from __future__ import annotations

from sqlalchemy.exc import IntegrityError
from sqlmodel import col, select
from sqlmodel.ext.asyncio.session import AsyncSession

from schemas.agents import AgentConfig, AgentCreate, AgentPublic
from store.lane import Lane
from store.tables import Agent
from store.tables.columns import utcnow


class AgentExistsError(ValueError):
    """An agent with that handle already exists."""


def to_public(row: Agent) -> AgentPublic:
    """The wire form of an agent row."""
    return AgentPublic(
        handle=row.handle,
        name=row.name,
        persona=row.persona,
        config=AgentConfig.model_validate(row.config),
        created_at=row.created_at,
    )


async def create_agent(session: AsyncSession, *, spec: AgentCreate) -> AgentPublic:
    """Insert a new agent.

    Raises:
        AgentExistsError: The handle is taken.
    """
    now = utcnow()
    row = Agent(
        handle=spec.handle,
        name=spec.name,
        persona=spec.persona,
        config=spec.config.model_dump(mode="json"),
        created_at=now,
        updated_at=now,
    )
    session.add(row)
    try:
        await session.commit()
    except IntegrityError:
        await session.rollback()
        raise AgentExistsError(
            f"agent {spec.handle!r} already exists: pick another handle"
        ) from None
    return to_public(row)


async def get_agent(session: AsyncSession, *, handle: str) -> AgentPublic | None:
    """One agent, or ``None``."""
    row = await session.get(Agent, handle)
    return to_public(row) if row is not None else None


_AGENT = "SELECT handle, name, persona, config, created_at FROM agents WHERE handle = %(handle)s"


async def agent_on(lane: Lane, *, handle: str) -> AgentPublic | None:
    """One agent, or ``None``: :func:`get_agent` on the driver lane, for every message's prompt."""
    row = await lane.first(_AGENT, {"handle": handle})
    if row is None:
        return None
    return AgentPublic(
        handle=row["handle"],
        name=row["name"],
        persona=row["persona"],
        config=AgentConfig.model_validate(row["config"]),
        created_at=row["created_at"],
    )


async def list_agents(session: AsyncSession) -> list[AgentPublic]:
    """Every agent, oldest first."""
    rows = await session.exec(select(Agent).order_by(col(Agent.created_at)))
    return [to_public(row) for row in rows]
