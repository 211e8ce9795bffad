"""Caps on open event streams: per token, and for the whole process.

A stream costs the service memory and a subscription to its one listener, nothing of the
database while it waits; still, a client that opens streams without end would take the
process's memory and every other integrator's share. Past a token's cap a new stream is
refused with 429, past the process's with 503, each with a ``Retry-After``. A stream's slot
is freed when its response ends, however it ends (the client left, the service stops).
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

import anyio
from starlette.responses import StreamingResponse
from starlette.types import Receive, Scope, Send

DEFAULT_STREAMS_PER_TOKEN = 20
"""Streams one token may hold open at once."""

DEFAULT_MAX_STREAMS = 200
"""Streams the process holds open at once, across tokens."""

RETRY_AFTER_S = 15
"""What a refused client is told to wait: streams last long, so one frees up slowly."""


class CapHit(StrEnum):
    """Which cap refused a stream."""

    TOKEN = "token"
    TOTAL = "total"


class StreamCapError(Exception):
    """A new stream would pass a cap."""

    def __init__(self, cap: CapHit, limit: int) -> None:
        super().__init__(f"{cap.value} cap of {limit} open streams reached")
        self.cap = cap
        self.limit = limit


@dataclass
class StreamSlot:
    """One open stream's place under the caps; :meth:`release` it once (again does nothing)."""

    caps: StreamCaps
    token_id: str
    released: bool = False

    def release(self) -> None:
        """Free the place."""
        if not self.released:
            self.released = True
            self.caps.release(self.token_id)


@dataclass
class StreamCaps:
    """Open streams counted by token and in total, in the process's memory.

    Args:
        per_token: Streams one token may hold open (at least 1).
        total: Streams the process holds open (at least 1).
    """

    per_token: int = DEFAULT_STREAMS_PER_TOKEN
    total: int = DEFAULT_MAX_STREAMS
    _open: dict[str, int] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.per_token < 1 or self.total < 1:
            raise ValueError("stream caps must be at least 1")

    @property
    def open_streams(self) -> int:
        """Streams open now."""
        return sum(self._open.values())

    def take(self, token_id: str) -> StreamSlot:
        """A place for one more stream of ``token_id``.

        Raises:
            StreamCapError: The token's cap (checked first) or the process's is reached.
        """
        if self._open.get(token_id, 0) >= self.per_token:
            raise StreamCapError(CapHit.TOKEN, self.per_token)
        if self.open_streams >= self.total:
            raise StreamCapError(CapHit.TOTAL, self.total)
        self._open[token_id] = self._open.get(token_id, 0) + 1
        return StreamSlot(self, token_id)

    def release(self, token_id: str) -> None:
        """One stream of ``token_id`` ended."""
        left = self._open.get(token_id, 0) - 1
        if left > 0:
            self._open[token_id] = left
        else:
            self._open.pop(token_id, None)


class SlotStreamingResponse(StreamingResponse):
    """A streaming response that ends when its client leaves and then frees its slot.

    Starlette, under servers of ASGI 2.4, notices a client gone only when a write fails, which
    for a quiet stream is the next keep-alive: until then a closed stream would hold its
    place. Here the response listens for the disconnect itself, as Starlette does for older
    servers, and the slot is freed however the response ends (the body's own ``finally`` is
    not enough: a body never started runs none).
    """

    def __init__(self, content: AsyncIterator[str], *, slot: StreamSlot, **kwargs: Any) -> None:
        super().__init__(content, **kwargs)
        self.slot = slot

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Send the stream until it ends or the client leaves; then free the slot."""
        try:
            async with anyio.create_task_group() as group:

                async def stream_then_stop() -> None:
                    with contextlib.suppress(OSError):  # the client left mid-write
                        await self.stream_response(send)
                    group.cancel_scope.cancel()

                group.start_soon(stream_then_stop)
                await self.listen_for_disconnect(receive)
                group.cancel_scope.cancel()
        finally:
            self.slot.release()
