"""One channel's live feed: token deltas of replies being written, replies, unprompted messages.

Replies and unprompted messages come from the outbox, which is durable: each carries its
outbox ID, and a reader that names the last one it saw (``after``) first gets every message
sent since, then the live ones, each once. A reader that names none first gets the unprompted
messages kept for pickup on the channel (sent while nobody was connected); once it has shown
one it says so with :func:`mark_shown`. Token deltas are presentation only (never
replayed): a channel announces each event it submits with streaming on
(:func:`announce_event`), and every feed of that channel then gets that event's deltas.
Every feed of a process shares its one listener (``usecases.listener``).
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from enum import StrEnum

from schemas.events import ChannelRef
from store.db import Database
from store.queries.channel_feed import outbox_after, outbox_message
from store.queries.delivery import kept_for_pickup, mark_picked_up
from store.sql import execute
from store.tables import OutboxRow
from usecases.listener import EVENTS_CHANNEL, ChannelListener, Delta


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
        await execute(
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
    *,
    db: Database,
    listener: ChannelListener,
    handle: str,
    channel: ChannelRef,
    after: str | None = None,
) -> AsyncIterator[AsyncIterator[FeedItem]]:
    """Listen to ``channel`` of agent ``handle``; yields an iterator of :class:`FeedItem`.

    Listening has begun once the block is entered. With ``after`` (an outbox ID the reader
    saw, or the ID of an event it posted: then that event's reply is the first), the messages
    sent since come first. The feed holds no database connection while it
    waits: ``listener`` is the process's one, and ``db`` lends a connection per read. The
    iterator ends when the listener closes the feed (it fell behind, or the connection was
    lost): the reader resumes after the last message ID it saw.

    Raises:
        ListenerUnavailableError: The listener is reconnecting to the database.
    """
    key = channel.key
    with listener.subscribe(agent=handle, channel_key=key) as notices:

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
            async for notice in notices:
                if isinstance(notice, Delta):
                    yield FeedItem(kind=FeedKind.DELTA, text=notice.text, event_id=notice.event_id)
                    continue
                # A message both in the backlog and announced live is shown once.
                if notice.message_id in seen:
                    continue
                seen.add(notice.message_id)
                async with db.session() as session:
                    live = await outbox_message(session, message_id=notice.message_id)
                if live is not None:
                    yield _item(live)

        yield items()


async def mark_shown(*, db: Database, message_ids: list[str]) -> None:
    """Unprompted messages a reader has shown are delivered (no longer kept for pickup)."""
    async with db.session() as session:
        await mark_picked_up(session, message_ids=message_ids)
