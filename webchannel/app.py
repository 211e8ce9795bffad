"""The web channel's application: ``create_app`` builds it, ``persyn serve`` runs it."""

from __future__ import annotations

import html
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import HTMLResponse, JSONResponse
from starlette.exceptions import HTTPException
from temporalio.client import Client

from schemas.settings import Settings
from usecases import submission
from usecases.listener import ChannelListener
from usecases.mind import describe as describe_mind
from usecases.presence import WorkerPresence
from usecases.store import open_store
from webchannel.approvals import router as approvals_router
from webchannel.body import DEFAULT_BODY_TIMEOUT_S, DEFAULT_MAX_BODY_BYTES, BodyError
from webchannel.limits import DEFAULT_BURST, DEFAULT_PER_MINUTE, MessageLimits
from webchannel.media import router as media_router
from webchannel.routes import body_error, router
from webchannel.state import WebState
from webchannel.stream_caps import DEFAULT_MAX_STREAMS, DEFAULT_STREAMS_PER_TOKEN, StreamCaps
from webchannel.voice.routes import router as voice_router
from webchannel.voice.runtime import close_voice
from workers.presence import HomePresence

PAGE = Path(__file__).parent / "static" / "index.html"

DESCRIPTION = """\
Talk to Persyn agents over HTTP: post a message (idempotent by `event_id`), read its
completion marker, and follow a channel's replies, token deltas and unprompted messages as
server-sent events. Every `/v1` request carries a bearer token from `persyn tokens create`.
Every refusal is `{"detail": "<one line>"}` naming what to fix; nothing is stored for it.
"""


def create_app(
    settings: Settings,
    *,
    client: Client | None = None,
    presence: WorkerPresence | None = None,
    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES,
    body_timeout: float = DEFAULT_BODY_TIMEOUT_S,
    messages_per_minute: int = DEFAULT_PER_MINUTE,
    burst: int = DEFAULT_BURST,
    streams_per_token: int = DEFAULT_STREAMS_PER_TOKEN,
    max_streams: int = DEFAULT_MAX_STREAMS,
) -> FastAPI:
    """The web channel for the deployment ``settings`` name.

    Args:
        settings: Where Temporal and PostgreSQL are, and the task queue.
        client: A connected Temporal client to use (tests share theirs); by default the
            service connects when it starts.
        presence: Whether a worker serves the task queue; by default, the workers of
            ``settings``'s home (their liveness beacons, else the pollers Temporal lists).
        max_body_bytes: Request bodies past this size are refused with 413.
        body_timeout: Seconds a client has to send a body once its headers are in (then 408).
        messages_per_minute: Messages each token may post a minute (0: no limit); past it,
            and past ``burst`` back to back, a message is refused with 429.
        burst: Messages a token may post back to back after a quiet spell.
        streams_per_token: Event streams one token may hold open; past it, 429.
        max_streams: Event streams the service holds open across tokens; past it, 503.
    """
    limits = MessageLimits(per_minute=messages_per_minute, burst=burst)
    streams = StreamCaps(per_token=streams_per_token, total=max_streams)

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        connected = client or await submission.connect_client(settings=settings)
        # One LISTEN connection for every stream of the process (usecases.listener).
        async with open_store(settings) as db, ChannelListener.for_settings(settings) as listener:
            app.state.web = WebState(
                settings=settings,
                db=db,
                client=connected,
                presence=presence or HomePresence(settings),
                max_body_bytes=max_body_bytes,
                limits=limits,
                body_timeout_s=body_timeout,
                listener=listener,
                streams=streams,
            )
            yield
            await close_voice(app)

    app = FastAPI(
        title="Persyn web channel",
        version="1",
        description=DESCRIPTION,
        lifespan=lifespan,
    )
    app.include_router(router)
    app.include_router(approvals_router)
    app.include_router(media_router)
    app.include_router(voice_router)
    app.add_exception_handler(BodyError, body_error)
    app.add_exception_handler(RequestValidationError, _validation_error)
    app.add_exception_handler(HTTPException, _http_error)
    app.add_exception_handler(Exception, _server_error)

    # Which mind serves is fixed for the process's life (the home's record is read once).
    page_html = render_page(settings)

    @app.get("/", include_in_schema=False)
    async def page() -> HTMLResponse:
        """The operator's chat page, saying which mind serves the agents."""
        return HTMLResponse(page_html)

    return app


def render_page(settings: Settings) -> str:
    """The chat page with the lines that say which mind serves (``usecases.mind``)."""
    lines = "\n".join(html.escape(line) for line in describe_mind(settings))
    return PAGE.read_text(encoding="utf-8").replace("<!--mind-->", lines)


def _http_error(request: Request, err: Exception) -> JSONResponse:
    """Every ``HTTPException`` as JSON, Starlette's own (no such path, wrong method) included."""
    assert isinstance(err, HTTPException)
    detail = str(err.detail)
    # Starlette's routing says only "Not Found" or "Method Not Allowed": say what to do.
    if err.status_code == 404 and detail == "Not Found":
        detail = f"there is no {request.url.path}: the API is described at /openapi.json"
    elif err.status_code == 405 and detail == "Method Not Allowed":
        allowed = (err.headers or {}).get("Allow", "")
        detail = f"{request.method} is not allowed on {request.url.path}: use {allowed}"
    return JSONResponse({"detail": detail}, err.status_code, headers=err.headers)


def _server_error(_: Request, __: Exception) -> JSONResponse:
    """A bug, answered as one line that names no internals.

    Starlette raises the exception again once this answer is sent, so the server logs its
    traceback.
    """
    return JSONResponse(
        {"detail": "the service failed on this request: retry it, and report it if it persists"},
        500,
    )


def _validation_error(_: Request, err: Exception) -> JSONResponse:
    """FastAPI's own parameter checks, in the one-line form every refusal has."""
    assert isinstance(err, RequestValidationError)
    first = err.errors()[0] if err.errors() else {}
    where = ".".join(str(part) for part in first.get("loc", ()))
    return JSONResponse({"detail": f"{where}: {first.get('msg', 'invalid request')}"}, 422)
