"""Live presentation over PostgreSQL LISTEN/NOTIFY: a reply's token deltas and unprompted messages.

Best effort, never the source of truth: the completion marker and the outbox are. Each stream is
an async context manager that is listening once entered (so nothing sent after that is missed)
and gives an async iterator; leaving the block stops listening.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

import psycopg

from activities.channels.stream import libpq_dsn, stream_channel
from schemas.events import ChannelRef
from schemas.settings import Settings
from store.db import Database
from store.queries.delivery import kept_for_pickup, mark_picked_up
from store.queries.runtime import OUTBOX_CHANNEL
from store.tables import OutboxRow
from usecases.store import open_store


@asynccontextmanager
async def notifications(
    *, settings: Settings, channels: list[str]
) -> AsyncIterator[AsyncIterator[tuple[str, Any]]]:
    """Listen on ``channels``; yields an iterator of ``(channel, decoded JSON payload)``."""
    dsn = libpq_dsn(settings.database_dsn())
    async with await psycopg.AsyncConnection.connect(dsn, autocommit=True) as conn:
        for channel in channels:
            await conn.execute(f'LISTEN "{channel}"')

        received = conn.notifies()

        async def payloads() -> AsyncIterator[tuple[str, Any]]:
            async for notice in received:
                yield notice.channel, json.loads(notice.payload)

        try:
            yield payloads()
        finally:
            # The generator holds the connection's lock while it waits: closing the connection
            # under it would wait for ever.
            await received.aclose()


@asynccontextmanager
async def token_deltas(*, settings: Settings, event_id: str) -> AsyncIterator[AsyncIterator[str]]:
    """The pieces of the reply to ``event_id`` as they are generated (submit it with stream on)."""
    async with notifications(settings=settings, channels=[stream_channel(event_id)]) as found:

        async def deltas() -> AsyncIterator[str]:
            async for _, payload in found:
                if isinstance(payload, dict):
                    yield str(payload.get("text", ""))

        yield deltas()


@dataclass(frozen=True)
class DraftPiece:
    """One notice of a reply being written: a piece of text, or the end of a phase.

    ``phase`` is ``draft`` while the candidate reply is generated and ``revise`` while the
    deliberation rewrites it; a client shows the revision replacing the draft.
    """

    phase: str
    text: str = ""
    done: bool = False


@asynccontextmanager
async def draft_pieces(
    *, settings: Settings, event_id: str
) -> AsyncIterator[AsyncIterator[DraftPiece]]:
    """The reply to ``event_id`` as it is written, phase by phase (submit it with stream on)."""
    async with notifications(settings=settings, channels=[stream_channel(event_id)]) as found:

        async def pieces() -> AsyncIterator[DraftPiece]:
            async for _, payload in found:
                if isinstance(payload, dict):
                    yield DraftPiece(
                        phase=str(payload.get("phase", "draft")),
                        text=str(payload.get("text", "")),
                        done=bool(payload.get("done", False)),
                    )

        yield pieces()


@asynccontextmanager
async def unprompted_messages(
    *, settings: Settings, handle: str, channel: ChannelRef
) -> AsyncIterator[AsyncIterator[str]]:
    """Texts the agent sends on ``channel`` on its own (replies to a submit are not among them).

    Messages kept for the channel while nobody was connected come first, oldest first; then
    the live ones. Each is marked picked up once the consumer asks for the next one (it has
    been shown), so it is not kept for the next client too.
    """
    key = channel.key
    async with (
        open_store(settings, pool_size=1) as db,
        notifications(settings=settings, channels=[OUTBOX_CHANNEL]) as found,
    ):

        async def texts() -> AsyncIterator[str]:
            shown: set[str] = set()
            async with db.session() as session:
                kept = await kept_for_pickup(session, agent=handle, channel_key=key)
            for row in kept:
                shown.add(row.id)
                yield row.text
                await _picked_up(db, row.id)
            async for _, payload in found:
                if not isinstance(payload, dict) or payload.get("agent") != handle:
                    continue
                if payload.get("channel") != key or payload.get("id") in shown:
                    continue
                async with db.session() as session:
                    live = await session.get(OutboxRow, str(payload.get("id")))
                if live is not None and live.unprompted:
                    shown.add(live.id)
                    yield live.text
                    await _picked_up(db, live.id)

        yield texts()


async def _picked_up(db: Database, message_id: str) -> None:
    async with db.session() as session:
        await mark_picked_up(session, message_ids=[message_id])
