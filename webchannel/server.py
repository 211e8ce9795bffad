"""How ``persyn serve`` runs the web channel: uvicorn with deadlines a slow client cannot stretch.

uvicorn by itself gives a client that opens a connection, or sends half a request line, as
long as it likes: its keep-alive timer starts only after a response and stops at the next
byte, so a client dribbling bytes holds a connection (and a file descriptor) for ever. Here a
request's line and headers must be complete within ``header_timeout`` seconds of its first
byte (of the connection's opening, for the first request), or the connection is answered 408
and closed. The body has its own deadline in the routes that read one (``webchannel.body``).
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import h11
import uvicorn
from fastapi import FastAPI
from uvicorn.protocols.http.h11_impl import H11Protocol

DEFAULT_HEADER_TIMEOUT_S = 10.0
"""How long a client may take to send a request's line and headers."""

KEEP_ALIVE_S = 5.0
"""How long an idle connection is kept for the client's next request."""

MAX_HEADER_BYTES = 16_384
"""The most a request's line and headers may take: h11 refuses more with 400."""


def _timeout_response(seconds: float) -> bytes:
    body = json.dumps(
        {"detail": f"the request's headers did not arrive within {seconds:g} s: send it again"},
        separators=(",", ":"),  # as every other answer of the service is written
    ).encode()
    head = (
        "HTTP/1.1 408 Request Timeout\r\n"
        "content-type: application/json\r\n"
        f"content-length: {len(body)}\r\n"
        "connection: close\r\n\r\n"
    )
    return head.encode("ascii") + body


def header_deadline_protocol(seconds: float) -> type[H11Protocol]:
    """Uvicorn's HTTP/1.1 protocol, closing a connection whose request's headers come too slowly."""

    class HeaderDeadlineProtocol(H11Protocol):
        _deadline: asyncio.TimerHandle | None = None

        def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
            super().connection_made(transport)
            self._watch_headers()

        def data_received(self, data: bytes) -> None:
            super().data_received(data)
            self._watch_headers()

        def connection_lost(self, exc: Exception | None) -> None:
            self._stop_deadline()
            super().connection_lost(exc)

        def _watch_headers(self) -> None:
            # h11 leaves IDLE once a request's line and headers are in: the deadline is met.
            waiting = self.conn.their_state is h11.IDLE and not self.transport.is_closing()
            if waiting and self._deadline is None:
                self._deadline = self.loop.call_later(seconds, self._too_slow)
            elif not waiting:
                self._stop_deadline()

        def _stop_deadline(self) -> None:
            if self._deadline is not None:
                self._deadline.cancel()
                self._deadline = None

        def _too_slow(self) -> None:
            self._deadline = None
            if self.conn.their_state is h11.IDLE and not self.transport.is_closing():
                self.transport.write(_timeout_response(seconds))
                self.transport.close()

    return HeaderDeadlineProtocol


def server_config(
    app: FastAPI,
    *,
    host: str,
    port: int,
    header_timeout: float = DEFAULT_HEADER_TIMEOUT_S,
    **options: Any,
) -> uvicorn.Config:
    """The uvicorn configuration ``persyn serve`` (and the tests) run ``app`` with.

    Args:
        app: The web channel.
        host: Address to listen on.
        port: Port to listen on.
        header_timeout: Seconds a client has to send a request's line and headers.
        **options: Further ``uvicorn.Config`` options (log level, graceful shutdown).
    """
    return uvicorn.Config(
        app,
        host=host,
        port=port,
        http=header_deadline_protocol(header_timeout),
        timeout_keep_alive=int(KEEP_ALIVE_S),
        h11_max_incomplete_event_size=MAX_HEADER_BYTES,
        **options,
    )
