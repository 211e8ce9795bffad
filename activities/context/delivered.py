"""A context source for what the agent's background work delivered on a channel.

Sandbox reports and finished renders reach the conversation as unprompted messages, which the
conversation's live window does not hold; a :class:`DeliveredSource` puts the latest ones of
one kind (told apart by their text's prefix) on the channel into the next prompt, fenced.
"""

from __future__ import annotations

from datetime import timedelta

from activities.context.fencing import Provenance
from activities.context.model import ContextBlock, ContextRequest, Trim
from store.db import Database
from store.queries.contacts import delivered_texts


class DeliveredSource:
    """The newest unprompted messages starting with ``prefix`` on this channel within ``window``.

    Args:
        db: The store.
        name: The context source's name.
        prefix: What the messages of this kind start with.
        title: The block's heading.
        order: Where the block sits among the volatile ones.
        provenance: The block's fence label.
        limit: Most messages shown.
        window: How far back to look.
    """

    required = False

    def __init__(
        self,
        db: Database,
        *,
        name: str,
        prefix: str,
        title: str,
        order: int,
        provenance: Provenance,
        limit: int = 3,
        window: timedelta = timedelta(days=1),
    ) -> None:
        self._db = db
        self.name = name
        self._prefix = prefix
        self._title = title
        self._order = order
        self._provenance = provenance
        self._limit = limit
        self._window = window

    async def fetch(self, request: ContextRequest) -> ContextBlock | None:
        """The messages, newest first; nothing when there are none."""
        data = request.input
        texts = await delivered_texts(
            self._db.lane,
            agent=data.agent,
            channel_key=data.channel.key,
            since=data.now - self._window,
            prefix=self._prefix,
            limit=self._limit,
        )
        if not texts:
            return None
        return ContextBlock(
            source=self.name,
            title=self._title,
            items=[f"- {text}" for text in texts],
            order=self._order,
            trim=Trim.LAST_FIRST,
            provenance=self._provenance,
        )
