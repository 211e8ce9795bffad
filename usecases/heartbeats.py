"""The agent's heartbeat from the client side: bootstrap once ever, then operator actions."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TypeVar

from temporalio.client import Client

from activities.scheduling.heartbeats import Heartbeats
from schemas.autonomy import HeartbeatStatus
from schemas.ids import check_handle
from schemas.settings import Settings
from store.db import Database
from store.queries.agents import get_agent
from store.tables.columns import utcnow
from temporal.client import connect
from usecases.errors import UnknownAgentError
from usecases.store import open_store

T = TypeVar("T")


async def bootstrap_heartbeat(
    *, db: Database, client: Client, settings: Settings, handle: str
) -> bool:
    """Start a new agent's heartbeat, once ever; a deletion stays durable.

    Returns:
        Whether it started now (False if it was started or deleted before).
    """
    heartbeats = Heartbeats(db, client, settings.autonomy)
    return await heartbeats.bootstrap(agent=handle, task_queue=settings.task_queue, now=utcnow())


async def _acting(settings: Settings, handle: str, act: Callable[[Heartbeats], Awaitable[T]]) -> T:
    check_handle(handle)
    async with open_store(settings) as db:
        async with db.session() as session:
            if await get_agent(session, handle=handle) is None:
                raise UnknownAgentError(handle)
        client = await connect(settings)
        return await act(Heartbeats(db, client, settings.autonomy))


async def heartbeat_status(*, settings: Settings, handle: str) -> HeartbeatStatus:
    """Whether the agent's heartbeat is active, and when it beats next.

    Raises:
        UnknownAgentError: no such agent.
    """
    return await _acting(settings, handle, lambda h: h.status(agent=handle))


async def delete_heartbeat(*, settings: Settings, handle: str) -> HeartbeatStatus:
    """Put the agent to sleep: no heartbeats or reminders fire until restored (durable).

    Raises:
        UnknownAgentError: no such agent.
        HeartbeatError: the heartbeat cannot be deleted now.
    """
    queue = settings.task_queue
    return await _acting(
        settings, handle, lambda h: h.delete(agent=handle, task_queue=queue, now=utcnow())
    )


async def restore_heartbeat(*, settings: Settings, handle: str) -> HeartbeatStatus:
    """Restore a deleted heartbeat (or start one that never ran).

    Raises:
        UnknownAgentError: no such agent.
        HeartbeatError: the heartbeat cannot be restored now.
    """
    queue = settings.task_queue
    return await _acting(
        settings, handle, lambda h: h.restore(agent=handle, task_queue=queue, now=utcnow())
    )


async def trigger_heartbeat(*, settings: Settings, handle: str) -> None:
    """Beat once now, outside the schedule.

    Raises:
        UnknownAgentError: no such agent.
        HeartbeatError: there is no heartbeat to trigger.
    """
    await _acting(settings, handle, lambda h: h.trigger(agent=handle))
