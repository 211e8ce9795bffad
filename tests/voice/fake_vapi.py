"""A local server speaking Vapi's ``POST /call`` and ``GET /call``: it records each request
and answers as Vapi; and a transport that stands for the worker dying right after a dial."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import uvicorn
from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse

from activities.voice.transport import CallTransport
from schemas.ids import new_ulid
from schemas.voice import CallRef
from temporal.devserver import free_port
from tests.harness import until

KEY = "vapi-private-key"


@dataclass
class FakeVapi:
    """What the fake was asked, and how it should answer."""

    base_url: str = ""
    calls: list[dict[str, Any]] = field(default_factory=list)
    """Every ``POST /call`` body, refused or not: each one is a dial."""
    placed: list[dict[str, Any]] = field(default_factory=list)
    """The calls it placed, as Vapi's call objects (what ``GET /call`` lists)."""
    lookups: list[dict[str, str]] = field(default_factory=list)
    """Every ``GET /call`` query."""
    refuse: str | None = None
    """When set, every call is refused with this message (400)."""
    answer_after_s: float = 0.0
    """A dial is answered this late (the dialler may have stopped waiting)."""
    refuse_lookup: int | None = None
    """When set, every lookup is refused with this status."""
    lookup_after_s: float = 0.0
    """A lookup is answered this late."""
    lookup_answer: Any = None
    """When set, every lookup answers this JSON instead of the calls."""


def _created(call: dict[str, Any], query: dict[str, str]) -> bool:
    since = query.get("createdAtGe")
    number = query.get("phoneNumberId")
    if number is not None and call["phoneNumberId"] != number:
        return False
    return since is None or call["createdAt"] >= since


@asynccontextmanager
async def fake_vapi() -> AsyncIterator[FakeVapi]:
    """The fake, served on a free port in this loop."""
    fake = FakeVapi()
    app = FastAPI()

    def authorized(request: Request) -> bool:
        return request.headers.get("authorization") == f"Bearer {KEY}"

    @app.post("/call")
    async def create_call(request: Request) -> JSONResponse:
        if not authorized(request):
            return JSONResponse({"message": "Invalid Key."}, 401)
        body = await request.json()
        fake.calls.append(body)
        if fake.refuse is not None:
            await asyncio.sleep(fake.answer_after_s)
            return JSONResponse({"message": [fake.refuse], "error": "Bad Request"}, 400)
        call = {
            "id": f"vapi-{new_ulid().lower()}",
            "type": "outboundPhoneCall",
            "status": "queued",
            "createdAt": datetime.now(UTC).isoformat(timespec="milliseconds")[:-6] + "Z",
            "phoneNumberId": body.get("phoneNumberId"),
            "customer": body.get("customer"),
            "assistantOverrides": body.get("assistantOverrides"),
        }
        fake.placed.append(call)
        await asyncio.sleep(fake.answer_after_s)
        return JSONResponse(call, 201)

    @app.get("/call")
    async def list_calls(request: Request) -> JSONResponse:
        if not authorized(request):
            return JSONResponse({"message": "Invalid Key."}, 401)
        query = dict(request.query_params)
        fake.lookups.append(query)
        await asyncio.sleep(fake.lookup_after_s)
        if fake.refuse_lookup is not None:
            return JSONResponse({"message": "Service Unavailable"}, fake.refuse_lookup)
        if fake.lookup_answer is not None:
            return JSONResponse(fake.lookup_answer)
        listed = [c for c in fake.placed if _created(c, query)]
        return JSONResponse(listed[: int(query.get("limit", "100"))])

    port = free_port()
    config = uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning")
    server = uvicorn.Server(config)
    task = asyncio.create_task(server.serve())
    await until(lambda: server.started, timeout=20)
    fake.base_url = f"http://127.0.0.1:{port}"
    try:
        yield fake
    finally:
        server.should_exit = True
        with contextlib.suppress(asyncio.CancelledError):
            await asyncio.wait_for(task, 10)


class WorkerCrashError(Exception):
    """Stands for the worker dying: nothing after it in the attempt runs, nothing is recorded."""


@dataclass
class CrashAfterDial:
    """A transport whose attempt dies right after the transport answered a dial.

    The next ``crashes`` dials are placed and answered, then :class:`WorkerCrashError` is raised
    before the answer reaches the caller, as when the worker died with the answer in hand.
    """

    inner: CallTransport
    crashes: int = 1

    async def dial(self, to: str, agent: str, first_message: str, *, key: str) -> CallRef:
        """Dial through the real transport, then die (while crashes are left)."""
        placed = await self.inner.dial(to, agent, first_message, key=key)
        if self.crashes > 0:
            self.crashes -= 1
            raise WorkerCrashError(f"the worker died after the transport placed {placed.call_id}")
        return placed

    async def find(self, key: str, since: datetime) -> CallRef | None:
        """The real transport's lookup."""
        return await self.inner.find(key, since)
