"""Agent lifecycle: create one with everything it runs on, and read the records."""

from __future__ import annotations

from datetime import timedelta

from schemas.agents import AgentCreate, AgentPublic
from schemas.settings import Settings
from store.db import Database
from store.queries import agents as records
from temporal import inbox
from temporal.client import connect
from temporal.schedules import ensure_maintenance_schedule
from usecases.heartbeats import bootstrap_heartbeat
from usecases.store import open_store


async def create_agent(*, settings: Settings, spec: AgentCreate) -> AgentPublic:
    """Create an agent: its row, its inbox workflow, its heartbeat and its maintenance schedule.

    The steps run in that order so a failure leaves at worst an agent without schedules, which
    the next worker start (heartbeat) or a re-run of the idempotent steps completes.

    Raises:
        AgentExistsError: the handle is taken.
    """
    async with open_store(settings) as db:
        async with db.session() as session:
            agent = await records.create_agent(session, spec=spec)
        client = await connect(settings)
        await inbox.start_agent(client, handle=agent.handle, task_queue=settings.task_queue)
        # Autonomy: the heartbeat is bootstrapped here, once ever; a deletion stays durable.
        await bootstrap_heartbeat(db=db, client=client, settings=settings, handle=agent.handle)
    # Memory formation: the agent's maintenance schedule (culling, retention); idempotent.
    await ensure_maintenance_schedule(
        client,
        handle=agent.handle,
        task_queue=settings.task_queue,
        every=timedelta(minutes=settings.memory.maintenance_minutes),
    )
    return agent


async def list_agents(*, settings: Settings) -> list[AgentPublic]:
    """Every agent."""
    async with open_store(settings) as db, db.session() as session:
        return await records.list_agents(session)


async def find_agent(*, settings: Settings, handle: str) -> AgentPublic | None:
    """One agent's record, or None if there is no such handle."""
    async with open_store(settings) as db, db.session() as session:
        return await records.get_agent(session, handle=handle)


async def agent_exists(*, db: Database, handle: str) -> bool:
    """Whether ``handle`` names an agent, on an open store (for services that keep one open)."""
    async with db.session() as session:
        return await records.get_agent(session, handle=handle) is not None
