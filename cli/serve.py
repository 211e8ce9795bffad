"""``persyn serve``: the web channel, an HTTP service for integrators and a browser chat page."""

from __future__ import annotations

import contextlib
from typing import Annotated

import typer

from cli.common import echo_err, friendly_errors, run
from schemas.settings import Settings, get_settings
from usecases import submission, tokens
from webchannel.limits import DEFAULT_BURST, DEFAULT_PER_MINUTE
from webchannel.stream_caps import DEFAULT_MAX_STREAMS, DEFAULT_STREAMS_PER_TOKEN


async def _preflight(settings: Settings) -> int:
    """Reach Temporal and the database before serving; the number of live tokens.

    A service that started without them would answer every request with an error; this way
    the operator gets one line saying what is missing instead.
    """
    await submission.connect_client(settings=settings)
    found = await tokens.list_tokens(settings=settings)
    return sum(1 for token in found if token.revoked_at is None)


@friendly_errors
def serve(
    host: Annotated[str, typer.Option(help="Address to listen on.")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="Port to listen on.")] = 8080,
    max_body_bytes: Annotated[
        int, typer.Option(help="Refuse request bodies larger than this (413).", min=1024)
    ] = 65_536,
    messages_per_minute: Annotated[
        int,
        typer.Option(help="Messages each token may post a minute (429 past it; 0: off).", min=0),
    ] = DEFAULT_PER_MINUTE,
    burst: Annotated[
        int, typer.Option(help="Messages each token may post back to back.", min=1)
    ] = DEFAULT_BURST,
    streams_per_token: Annotated[
        int,
        typer.Option(help="Event streams each token may hold open (429 past it).", min=1),
    ] = DEFAULT_STREAMS_PER_TOKEN,
    max_streams: Annotated[
        int,
        typer.Option(help="Event streams the service holds open in all (503 past it).", min=1),
    ] = DEFAULT_MAX_STREAMS,
) -> None:
    """Serve the web channel: the /v1 API (OpenAPI at /openapi.json) and a chat page at /."""
    import uvicorn

    from webchannel.app import create_app
    from webchannel.server import server_config

    settings = get_settings()
    if run(_preflight(settings)) == 0:
        echo_err("no live tokens: create one with `persyn tokens create NAME`")
    app = create_app(
        settings,
        max_body_bytes=max_body_bytes,
        messages_per_minute=messages_per_minute,
        burst=burst,
        streams_per_token=streams_per_token,
        max_streams=max_streams,
    )
    echo_err(f"web channel on http://{host}:{port}/ (API docs at /docs)")
    # Event streams stay open for as long as their readers: on Ctrl-C, end them after a moment
    # instead of waiting for every browser to leave (a reader reconnects with Last-Event-ID).
    config = server_config(
        app, host=host, port=port, log_level="warning", timeout_graceful_shutdown=3
    )
    # uvicorn re-raises the Ctrl-C it shut down on; `uvicorn.run` swallowed it, and so do we:
    # stopping the server is what the operator asked for, not an error.
    with contextlib.suppress(KeyboardInterrupt):
        uvicorn.Server(config).run()
