"""One channel's live feed: token deltas of replies being written, replies, unprompted messages.

Replies and unprompted messages come from the outbox, which is durable: each carries its
outbox ID, and a reader that names the last one it saw (``after``) first gets every message
sent since, then the live ones, each once. A reader that names none first gets the unprompted
messages kept for pickup on the channel (sent while nobody was connected); once it has shown
one it says so with :func:`mark_shown`. Token deltas are presentation only (never
replayed): a channel announces each event it submits with streaming on
(:func:`announce_event`), and every feed of that channel then listens to that event's deltas.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from enum import StrEnum

from activities.channels.stream import stream_channel
from schemas.events import ChannelRef
from schemas.settings import Settings
from store.db import Database, execute_sql
from store.queries.channel_feed import outbox_after, outbox_message
from store.queries.delivery import kept_for_pickup, mark_picked_up
from store.queries.runtime import OUTBOX_CHANNEL
from store.tables import OutboxRow
from usecases.store import open_store
from usecases.streams import notifications

EVENTS_CHANNEL = "persyn_channel_events"
"""NOTIFY channel on which channels announce events submitted with streaming on."""

FOLLOW_FOR_S = 600.0
"""How long a feed follows one event's deltas at most (a reply queued behind others waits)."""

MAX_FOLLOWED = 8
"""Events whose deltas one feed follows at once; each holds a connection, and deltas are
presentation only, so past this a burst of events is shown by its replies alone."""


class FeedKind(StrEnum):
    """What a feed item is."""

    DELTA = "delta"
    """A piece of a reply being generated (presentation only; it has no ID)."""
    REPLY = "reply"
    """A reply the agent transmitted on the channel."""
    UNPROMPTED = "unprompted"
    """A message the agent sent on its own (reminder, heartbeat, goal)."""


@dataclass(frozen=True)
class FeedItem:
    """One thing that happened on the channel."""

    kind: FeedKind
    text: str
    message_id: str | None = None
    """The outbox ID (replies and unprompted messages): what a reader resumes after."""
    event_id: str | None = None
    """The inbound event a delta or a reply belongs to (none for an unprompted message)."""
    conversation_id: str | None = None


async def announce_event(*, db: Database, handle: str, channel: ChannelRef, event_id: str) -> None:
    """Tell the channel's feeds that ``event_id`` is being submitted with streaming on.

    Call it before submitting: the feeds start listening to its deltas before the first one.
    """
    payload = json.dumps({"agent": handle, "channel": channel.key, "event_id": event_id})
    async with db.session() as session:
        await execute_sql(
            session,
            "SELECT pg_notify(:channel, :payload)",
            {"channel": EVENTS_CHANNEL, "payload": payload},
        )
        await session.commit()


def _item(row: OutboxRow) -> FeedItem:
    return FeedItem(
        kind=FeedKind.UNPROMPTED if row.unprompted else FeedKind.REPLY,
        text=row.text,
        message_id=row.id,
        event_id=row.event_id,
        conversation_id=row.conversation_id,
    )


@asynccontextmanager
async def channel_feed(
    *, settings: Settings, handle: str, channel: ChannelRef, after: str | None = None
) -> AsyncIterator[AsyncIterator[FeedItem]]:
    """Listen to ``channel`` of agent ``handle``; yields an iterator of :class:`FeedItem`.

    Listening has begun once the block is entered. With ``after`` (an outbox ID the reader
    saw, or the ID of an event it posted: then that event's reply is the first), the messages
    sent since come first.
    """
    key = channel.key
    queue: asyncio.Queue[FeedItem] = asyncio.Queue()
    followers: set[asyncio.Task[None]] = set()

    async def follow(event_id: str) -> None:
        # Until the draft's stream says it is done; a reply that never streams is let go.
        with contextlib.suppress(TimeoutError):
            async with (
                asyncio.timeout(FOLLOW_FOR_S),
                notifications(settings=settings, channels=[stream_channel(event_id)]) as deltas,
            ):
                async for _, payload in deltas:
                    if not isinstance(payload, dict) or payload.get("done"):
                        return
                    text = str(payload.get("text", ""))
                    if text:
                        await queue.put(FeedItem(kind=FeedKind.DELTA, text=text, event_id=event_id))

    async with (
        open_store(settings, pool_size=1) as db,
        notifications(settings=settings, channels=[OUTBOX_CHANNEL, EVENTS_CHANNEL]) as found,
    ):

        async def read() -> None:
            async for source, payload in found:
                if not isinstance(payload, dict) or payload.get("agent") != handle:
                    continue
                if payload.get("channel") != key:
                    continue
                if source == EVENTS_CHANNEL:
                    if len(followers) >= MAX_FOLLOWED:
                        continue
                    task = asyncio.create_task(follow(str(payload.get("event_id"))))
                    followers.add(task)
                    task.add_done_callback(followers.discard)
                    continue
                async with db.session() as session:
                    row = await outbox_message(session, message_id=str(payload.get("id")))
                if row is not None:
                    await queue.put(_item(row))

        reader = asyncio.create_task(read())

        async def items() -> AsyncIterator[FeedItem]:
            seen: set[str] = set()
            async with db.session() as session:
                if after is not None:
                    backlog = await outbox_after(
                        session, agent=handle, channel_key=key, after_id=after
                    )
                else:
                    backlog = await kept_for_pickup(session, agent=handle, channel_key=key)
            for row in backlog:
                seen.add(row.id)
                yield _item(row)
            while True:
                item = await queue.get()
                if item.message_id is not None:
                    # A message both in the backlog and announced live is shown once.
                    if item.message_id in seen:
                        continue
                    seen.add(item.message_id)
                yield item

        try:
            yield items()
        finally:
            for task in [reader, *followers]:
                task.cancel()
            for task in [reader, *followers]:
                with contextlib.suppress(BaseException):
                    await task


async def mark_shown(*, db: Database, message_ids: list[str]) -> None:
    """Unprompted messages a reader has shown are delivered (no longer kept for pickup)."""
    async with db.session() as session:
        await mark_picked_up(session, message_ids=message_ids)
