"""The residue context source: a small standing block of what recent conversations left behind.

The items of the turn's memory compartment (its channel and the channels grouped with it), live
as of the turn's moment, most recently carried first, each with the day it dates from. Fenced:
they were made from what people said.
"""

from __future__ import annotations

from datetime import timedelta

from activities.context.fencing import RESIDUE
from activities.context.model import ContextBlock, ContextRequest, Trim
from schemas.residue import ResidueSettings
from store.db import Database
from store.queries.residue import live_items_on

ORDER = 43
"""After goals (40), before pinned notes (44) and quick facts (45)."""


class ResidueSource:
    """Live residue items of the turn's memory compartment."""

    name = "residue"
    required = False

    def __init__(self, db: Database, settings: ResidueSettings) -> None:
        self._db = db
        self._settings = settings

    async def fetch(self, request: ContextRequest) -> ContextBlock | None:
        """The items, as of the turn's moment (``input.now``)."""
        if not self._settings.enabled:
            return None
        items = await live_items_on(
            self._db.lane,
            agent=request.agent.handle,
            channel_key=request.input.event.channel.key,
            now=request.input.now,
            expire=timedelta(days=self._settings.expire_days),
            limit=self._settings.max_items,
        )
        if not items:
            return None
        return ContextBlock(
            source=self.name,
            title="What recent conversations left behind (as you noted when each ended):",
            items=[f"- {item.text} (since {item.since:%a %-d %b})" for item in items],
            order=ORDER,
            trim=Trim.LAST_FIRST,
            provenance=RESIDUE,
        )
