"""A local server speaking Vapi's ``POST /call``: it records each request and answers as Vapi."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

import uvicorn
from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse

from schemas.ids import new_ulid
from temporal.devserver import free_port
from tests.harness import until

KEY = "vapi-private-key"


@dataclass
class FakeVapi:
    """What the fake was asked, and how it should answer."""

    base_url: str = ""
    calls: list[dict[str, Any]] = field(default_factory=list)
    refuse: str | None = None
    """When set, every call is refused with this message (400)."""


@asynccontextmanager
async def fake_vapi() -> AsyncIterator[FakeVapi]:
    """The fake, served on a free port in this loop."""
    fake = FakeVapi()
    app = FastAPI()

    @app.post("/call")
    async def create_call(request: Request) -> JSONResponse:
        if request.headers.get("authorization") != f"Bearer {KEY}":
            return JSONResponse({"message": "Invalid Key."}, 401)
        body = await request.json()
        fake.calls.append(body)
        if fake.refuse is not None:
            return JSONResponse({"message": [fake.refuse], "error": "Bad Request"}, 400)
        return JSONResponse({"id": f"vapi-{new_ulid().lower()}", "status": "queued"}, 201)

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
