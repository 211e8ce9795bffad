"""Server-sent events: one feed item as one event, with the outbox ID as its event ID.

Deltas carry no ID, so a browser's ``Last-Event-ID`` is always the last reply or unprompted
message it saw, and a reconnect resumes after it. A reply's and a delta's data name the event
they answer (``event_id``), so a client matches each reply to the message it posted.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator

from usecases.channel_feed import FeedItem

KEEPALIVE_S = 15.0
"""A comment line this often keeps proxies from closing an idle stream."""


def encode(item: FeedItem) -> str:
    """One feed item in the ``text/event-stream`` format."""
    data = {
        "text": item.text,
        "message_id": item.message_id,
        "event_id": item.event_id,
        "conversation_id": item.conversation_id,
    }
    lines = [f"event: {item.kind.value}"]
    if item.message_id is not None:
        lines.append(f"id: {item.message_id}")
    lines.append(f"data: {json.dumps(data, ensure_ascii=False)}")
    return "\n".join(lines) + "\n\n"


async def with_keepalive(
    items: AsyncIterator[FeedItem],
) -> AsyncIterator[tuple[str, FeedItem | None]]:
    """Each item encoded (beside the item), and a comment line when the feed is quiet a while."""
    yield ": listening\n\n", None  # tells the client the stream is open and listening
    pending: asyncio.Task[FeedItem] | None = None
    try:
        while True:
            if pending is None:
                pending = asyncio.ensure_future(anext(items))
            done, _ = await asyncio.wait({pending}, timeout=KEEPALIVE_S)
            if not done:
                yield ": keep-alive\n\n", None
                continue
            item = pending.result()
            pending = None
            yield encode(item), item
    finally:
        if pending is not None:
            pending.cancel()
