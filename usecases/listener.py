"""One LISTEN connection per process, its notifications fanned out to channel feeds in memory.

A web channel process may hold hundreds of open streams. Each is a :class:`Subscription`
here, a bounded queue fed by the one task that reads the connection, so a waiting stream
holds no database connection of its own. What arrives:

- an outbox row written on a channel (``OUTBOX_CHANNEL``): :class:`Sent`, to the channel's
  subscriptions;
- an event announced on a channel with streaming on (``EVENTS_CHANNEL``): if anyone follows
  that channel, the listener LISTENs to the event's token deltas at once, and each one is a
  :class:`Delta` to the channel's subscriptions until the stream says it is done.

A subscriber that falls :data:`QUEUE_SIZE` notices behind is closed rather than waited for,
and so is every subscriber when the connection is lost (the listener reconnects): a reader
resumes with the last message ID it saw, and the outbox replays what it missed.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import time
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from typing import Any

import psycopg

from activities.channels.stream import libpq_dsn, stream_channel
from schemas.settings import Settings
from store.queries.runtime import OUTBOX_CHANNEL

log = logging.getLogger(__name__)

EVENTS_CHANNEL = "persyn_channel_events"
"""NOTIFY channel on which channels announce events submitted with streaming on."""

QUEUE_SIZE = 256
"""Notices a subscriber may fall behind before it is closed."""

WAIT_S = 1.0
"""The longest one wait for notifications lasts before the listener looks after itself."""

FOLLOW_FOR_S = 600.0
"""How long an event's deltas are followed at most (a reply queued behind others waits)."""

MAX_FOLLOWED = 256
"""Events whose deltas the process follows at once; deltas are presentation only, so past
this a burst of events is shown by its replies alone."""

APPLICATION_NAME = "persyn-web-listener"
"""How the listener's connection shows in ``pg_stat_activity``."""

RECONNECT_S = (0.5, 1.0, 2.0, 5.0)
"""Waits between attempts to reach the database again (the last one repeats)."""


class ListenerUnavailableError(Exception):
    """The listener has no connection now: live events cannot be followed."""


@dataclass(frozen=True)
class Sent:
    """The agent wrote an outbox row on the channel (a reply or an unprompted message)."""

    message_id: str


@dataclass(frozen=True)
class Delta:
    """A piece of the reply to ``event_id`` as it is generated."""

    event_id: str
    text: str


Notice = Sent | Delta


class Subscription:
    """One reader of one agent's channel: an async iterator of notices that ends when closed."""

    def __init__(self, key: tuple[str, str], size: int) -> None:
        self.key = key
        self.closed_because: str | None = None
        self._queue: asyncio.Queue[Notice | None] = asyncio.Queue(maxsize=size)

    def offer(self, notice: Notice) -> None:
        """Queue ``notice``; a subscriber too far behind is closed instead of waited for."""
        if self.closed_because is not None:
            return
        try:
            self._queue.put_nowait(notice)
        except asyncio.QueueFull:
            self.close("the reader fell behind")

    def close(self, reason: str) -> None:
        """End the iteration after what is queued is dropped (the reader resumes by ID)."""
        if self.closed_because is not None:
            return
        self.closed_because = reason
        while not self._queue.empty():
            self._queue.get_nowait()
        self._queue.put_nowait(None)

    def __aiter__(self) -> AsyncIterator[Notice]:
        return self

    async def __anext__(self) -> Notice:
        notice = await self._queue.get()
        if notice is None:
            self._queue.put_nowait(None)  # every later call ends too
            raise StopAsyncIteration
        return notice


@dataclass
class _Followed:
    key: tuple[str, str]
    event_id: str
    until: float


@dataclass
class ChannelListener:
    """The process's one LISTEN connection; enter it to start, leave it to stop.

    Args:
        dsn: The database, as a SQLAlchemy or libpq URL.
        queue_size: Notices a subscriber may fall behind before it is closed.
        startup_wait_s: How long entering waits for the first connection (streams are
            refused with 503 until it is up).
    """

    dsn: str
    queue_size: int = QUEUE_SIZE
    startup_wait_s: float = 10.0
    _subscribers: dict[tuple[str, str], set[Subscription]] = field(default_factory=dict)
    _followed: dict[str, _Followed] = field(default_factory=dict)
    _changes: list[str] = field(default_factory=list)
    _ready: asyncio.Event = field(default_factory=asyncio.Event)
    _task: asyncio.Task[None] | None = None

    @classmethod
    def for_settings(cls, settings: Settings) -> ChannelListener:
        """The listener on the database ``settings`` name."""
        return cls(libpq_dsn(settings.database_dsn()))

    async def __aenter__(self) -> ChannelListener:
        self._task = asyncio.create_task(self._run(), name="channel-listener")
        # Streams opened before the first connection are refused (503), not left silent.
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._ready.wait(), timeout=self.startup_wait_s)
        return self

    async def __aexit__(self, *exc: object) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
        self._close_all("the service is stopping")

    @property
    def ready(self) -> bool:
        """Whether the connection is up (a new subscription would be refused otherwise)."""
        return self._ready.is_set()

    @property
    def subscribers(self) -> int:
        """Open subscriptions (every open stream of the process)."""
        return sum(len(found) for found in self._subscribers.values())

    @contextlib.contextmanager
    def subscribe(self, *, agent: str, channel_key: str) -> Iterator[Subscription]:
        """Follow ``channel_key`` of ``agent``: listening has begun once the block is entered.

        Raises:
            ListenerUnavailableError: The listener is reconnecting to the database.
        """
        if not self._ready.is_set():
            raise ListenerUnavailableError("live events are unavailable: the database is away")
        sub = Subscription((agent, channel_key), self.queue_size)
        self._subscribers.setdefault(sub.key, set()).add(sub)
        try:
            yield sub
        finally:
            found = self._subscribers.get(sub.key)
            if found is not None:
                found.discard(sub)
                if not found:
                    del self._subscribers[sub.key]

    async def _run(self) -> None:
        attempt = 0
        while True:
            try:
                async with await psycopg.AsyncConnection.connect(
                    self.dsn, autocommit=True, application_name=APPLICATION_NAME
                ) as conn:
                    for channel in (OUTBOX_CHANNEL, EVENTS_CHANNEL):
                        await conn.execute(f'LISTEN "{channel}"')
                    self._ready.set()
                    attempt = 0
                    await self._listen(conn)
            except (psycopg.Error, OSError) as err:
                log.warning("channel listener lost its connection (%s): reconnecting", err)
            except Exception:
                # A bug here must not end live events for good: log it and start over.
                log.exception("channel listener failed: reconnecting")
            self._ready.clear()
            self._followed.clear()
            self._changes.clear()
            self._close_all("live events were interrupted: reconnect with Last-Event-ID")
            await asyncio.sleep(RECONNECT_S[min(attempt, len(RECONNECT_S) - 1)])
            attempt += 1

    async def _listen(self, conn: psycopg.AsyncConnection[Any]) -> None:
        while True:
            while self._changes:
                await conn.execute(self._changes.pop(0))
            self._expire()
            # The generator holds the connection's lock while it waits: it is closed before
            # anything else runs on the connection (a LISTEN for an announced event).
            async with contextlib.aclosing(conn.notifies(timeout=WAIT_S)) as notices:
                async for notice in notices:
                    self._dispatch(notice.channel, notice.payload)
                    if self._changes:
                        break

    def _dispatch(self, channel: str, raw: str) -> None:
        try:
            payload = json.loads(raw)
        except ValueError:
            return
        if not isinstance(payload, dict):
            return
        if channel == OUTBOX_CHANNEL:
            key = (str(payload.get("agent")), str(payload.get("channel")))
            for sub in list(self._subscribers.get(key, ())):
                sub.offer(Sent(str(payload.get("id"))))
        elif channel == EVENTS_CHANNEL:
            self._announced(payload)
        elif (followed := self._followed.get(channel)) is not None:
            if payload.get("done"):
                self._unfollow(channel)
                return
            text = str(payload.get("text", ""))
            for sub in list(self._subscribers.get(followed.key, ())) if text else ():
                sub.offer(Delta(followed.event_id, text))

    def _announced(self, payload: dict[str, Any]) -> None:
        key = (str(payload.get("agent")), str(payload.get("channel")))
        event_id = str(payload.get("event_id"))
        deltas = stream_channel(event_id)
        if key not in self._subscribers or deltas in self._followed:
            return
        if len(self._followed) >= MAX_FOLLOWED:
            return
        self._followed[deltas] = _Followed(key, event_id, time.monotonic() + FOLLOW_FOR_S)
        self._changes.append(f'LISTEN "{deltas}"')

    def _unfollow(self, channel: str) -> None:
        self._followed.pop(channel, None)
        self._changes.append(f'UNLISTEN "{channel}"')

    def _expire(self) -> None:
        now = time.monotonic()
        for channel, followed in list(self._followed.items()):
            if followed.until < now or followed.key not in self._subscribers:
                self._unfollow(channel)

    def _close_all(self, reason: str) -> None:
        for found in list(self._subscribers.values()):
            for sub in list(found):
                sub.close(reason)
