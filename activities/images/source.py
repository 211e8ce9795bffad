"""The context source that notes finished renders for the agent's next turn.

A render reaches the conversation as an unprompted message, which the conversation's live
window does not hold; this source puts the latest ones on the channel into the next prompt.
"""

from __future__ import annotations

from datetime import timedelta

from activities.context.fencing import Provenance
from activities.context.model import ContextBlock, ContextRequest, Trim
from schemas.images import IMAGE_PREFIX
from store.db import Database
from store.queries.contacts import unprompted_messages

RENDERS = Provenance(
    source="images",
    origin="the images you asked for with generate_image",
    trust="your own renders: the prompt you gave and where the image is kept",
)


class RendersSource:
    """The newest renders delivered on this channel within ``window``."""

    name = "images"
    required = False

    def __init__(self, db: Database, *, limit: int = 3, window: timedelta = timedelta(days=1)):
        self._db = db
        self._limit = limit
        self._window = window

    async def fetch(self, request: ContextRequest) -> ContextBlock | None:
        """The renders, newest first; nothing when there are none."""
        data = request.input
        async with self._db.session() as session:
            rows = await unprompted_messages(
                session,
                agent=data.agent,
                since=data.now - self._window,
                channel_key=data.channel.key,
            )
        renders = [row.text for row in rows if row.text.startswith(IMAGE_PREFIX)]
        if not renders:
            return None
        return ContextBlock(
            source=self.name,
            title="Images you asked for (newest first):",
            items=[f"- {text}" for text in reversed(renders[-self._limit :])],
            order=48,
            trim=Trim.LAST_FIRST,
            provenance=RENDERS,
        )
