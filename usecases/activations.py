"""Activations from a client: which one handled an event."""

from __future__ import annotations

from schemas.settings import Settings
from store.queries.runtime import activations_of_event
from usecases.store import open_store


async def activations_for_event(*, settings: Settings, event_id: str) -> list[str]:
    """The activation IDs recorded for ``event_id`` (``persyn send`` prints the event's)."""
    async with open_store(settings, pool_size=1) as db, db.autocommit() as session:
        return await activations_of_event(session, event_id=event_id)
