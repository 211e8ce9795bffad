"""Token streams over LISTEN/NOTIFY: best-effort live presentation, never the source of truth."""

from __future__ import annotations

import json

import psycopg

STREAM_PREFIX = "persyn_stream_"
_MAX_NOTIFY_BYTES = 7000  # NOTIFY payloads must stay under 8000 bytes


def stream_channel(key: str) -> str:
    """The NOTIFY channel for a stream key."""
    return f"{STREAM_PREFIX}{key.lower()}"


def libpq_dsn(sqlalchemy_url: str) -> str:
    """A libpq connection string from a SQLAlchemy URL."""
    return sqlalchemy_url.replace("postgresql+psycopg://", "postgresql://", 1)


class NotifySink:
    """Sends token deltas as NOTIFY messages on one channel; open per streamed call."""

    def __init__(self, dsn: str, key: str, phase: str) -> None:
        self._dsn = libpq_dsn(dsn)
        self._channel = stream_channel(key)
        self._phase = phase
        self._conn: psycopg.AsyncConnection[object] | None = None
        self._seq = 0

    async def __aenter__(self) -> NotifySink:
        self._conn = await psycopg.AsyncConnection.connect(self._dsn, autocommit=True)
        return self

    async def __aexit__(self, *exc: object) -> None:
        if self._conn is not None:
            try:
                await self._send({"phase": self._phase, "done": True})
            finally:
                await self._conn.close()

    async def _send(self, body: dict[str, object]) -> None:
        assert self._conn is not None
        self._seq += 1
        payload = json.dumps({"seq": self._seq, **body})[:_MAX_NOTIFY_BYTES]
        await self._conn.execute("SELECT pg_notify(%s, %s)", (self._channel, payload))

    async def delta(self, text: str) -> None:
        """Publish one piece of generated text."""
        await self._send({"phase": self._phase, "text": text})
