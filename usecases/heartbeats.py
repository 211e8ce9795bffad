"""The agent's heartbeat from the client side: bootstrap once ever, then operator actions."""

from __future__ import annotations

from temporalio.client import Client

from activities.scheduling.heartbeats import Heartbeats
from schemas.settings import Settings
from store.db import Database
from store.tables.columns import utcnow


async def bootstrap_heartbeat(
    *, db: Database, client: Client, settings: Settings, handle: str
) -> bool:
    """Start a new agent's heartbeat, once ever; a deletion stays durable.

    Returns:
        Whether it started now (False if it was started or deleted before).
    """
    heartbeats = Heartbeats(db, client, settings.autonomy)
    return await heartbeats.bootstrap(agent=handle, task_queue=settings.task_queue, now=utcnow())
