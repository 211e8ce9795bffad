"""``persyn serve``: the web channel, an HTTP service for integrators and a browser chat page."""

from __future__ import annotations

from typing import Annotated

import typer

from cli.common import friendly_errors
from schemas.settings import get_settings


@friendly_errors
def serve(
    host: Annotated[str, typer.Option(help="Address to listen on.")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="Port to listen on.")] = 8080,
    max_body_bytes: Annotated[
        int, typer.Option(help="Refuse request bodies larger than this (413).", min=1024)
    ] = 65_536,
) -> None:
    """Serve the web channel: the /v1 API (OpenAPI at /openapi.json) and a chat page at /."""
    import uvicorn

    from webchannel.app import create_app

    app = create_app(get_settings(), max_body_bytes=max_body_bytes)
    typer.echo(f"web channel on http://{host}:{port}/ (API docs at /docs)", err=True)
    uvicorn.run(app, host=host, port=port, log_level="warning")
