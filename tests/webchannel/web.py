"""The web channel served for real: uvicorn on a free port, in the test's own event loop."""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

import httpx
import uvicorn
from temporalio.client import Client

from schemas.settings import Settings
from temporal.devserver import free_port
from tests.harness import until
from usecases.tokens import TokenPublic, create_token
from webchannel.app import create_app
from webchannel.body import DEFAULT_BODY_TIMEOUT_S
from webchannel.limits import DEFAULT_BURST, DEFAULT_PER_MINUTE
from webchannel.server import DEFAULT_HEADER_TIMEOUT_S, server_config
from webchannel.stream_caps import DEFAULT_MAX_STREAMS, DEFAULT_STREAMS_PER_TOKEN
from webchannel.tenancy import tenant_channel


@dataclass
class Served:
    """A running web channel and a token for it."""

    base_url: str
    token: str
    record: TokenPublic | None = None
    """The token's record (for its tenant), when the test made it."""

    def channel_key(self, name: str) -> str:
        """The agent's key for this token's channel ``name`` (what the outbox rows carry)."""
        assert self.record is not None
        return tenant_channel(self.record, name).key

    def http(self, token: str | None = None) -> httpx.AsyncClient:
        """An HTTP client for the service, with the bearer token (or another one)."""
        bearer = self.token if token is None else token
        headers = {"Authorization": f"Bearer {bearer}"} if bearer else {}
        return httpx.AsyncClient(base_url=self.base_url, headers=headers, timeout=60)


@asynccontextmanager
async def serving(
    settings: Settings,
    client: Client,
    *,
    max_body_bytes: int = 65_536,
    messages_per_minute: int = DEFAULT_PER_MINUTE,
    burst: int = DEFAULT_BURST,
    header_timeout: float = DEFAULT_HEADER_TIMEOUT_S,
    body_timeout: float = DEFAULT_BODY_TIMEOUT_S,
    streams_per_token: int = DEFAULT_STREAMS_PER_TOKEN,
    max_streams: int = DEFAULT_MAX_STREAMS,
) -> AsyncIterator[Served]:
    """``persyn serve`` as a task of this loop, with a fresh token for every agent."""
    port = free_port()
    app = create_app(
        settings,
        client=client,
        max_body_bytes=max_body_bytes,
        messages_per_minute=messages_per_minute,
        burst=burst,
        body_timeout=body_timeout,
        streams_per_token=streams_per_token,
        max_streams=max_streams,
    )
    config = server_config(
        app,
        host="127.0.0.1",
        port=port,
        header_timeout=header_timeout,
        log_level="warning",
        lifespan="on",
    )
    server = uvicorn.Server(config)
    task = asyncio.create_task(server.serve())
    await until(lambda: server.started, timeout=20)
    record, token = await create_token(settings=settings, name="tests")
    try:
        yield Served(base_url=f"http://127.0.0.1:{port}", token=token, record=record)
    finally:
        server.should_exit = True
        with contextlib.suppress(asyncio.CancelledError):
            await asyncio.wait_for(task, 10)


@dataclass
class SseEvent:
    """One server-sent event as a client parses it."""

    kind: str
    data: dict[str, Any]
    id: str | None


async def sse_events(response: httpx.Response) -> AsyncIterator[SseEvent]:
    """The events of a ``text/event-stream`` response; a comment line is a ``comment`` event."""
    kind, data, event_id = "message", "", None
    async for line in response.aiter_lines():
        if line.startswith(":"):
            yield SseEvent("comment", {"text": line[1:].strip()}, None)
        elif line == "":
            if data:
                yield SseEvent(kind, json.loads(data), event_id)
            kind, data, event_id = "message", "", None
        elif line.startswith("event: "):
            kind = line[7:]
        elif line.startswith("data: "):
            data += line[6:]
        elif line.startswith("id: "):
            event_id = line[4:]
