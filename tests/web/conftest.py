"""A local HTTP server per test on 127.0.0.1, and a way to run a tool as the loop would."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
from ulid import ULID

from activities.tools.registry import Tool, ToolRun
from schemas.events import ChannelRef
from schemas.tools import ToolContext

ARTICLE = (
    "<html><head><title>Tides of Brittany</title></head><body>"
    "<nav>Home | About | Contact</nav><article><h1>Tides of Brittany</h1>"
    + "<p>The tidal range at Mont-Saint-Michel reaches fourteen metres at spring tides. </p>" * 8
    + "</article><footer>Copyright footer text</footer></body></html>"
)


class _Handler(BaseHTTPRequestHandler):
    release: threading.Event

    def do_GET(self) -> None:
        if self.path == "/article":
            self._send(200, ARTICLE.encode(), "text/html; charset=utf-8")
        elif self.path == "/redirect":
            self.send_response(302)
            self.send_header("Location", "/article")
            self.end_headers()
        elif self.path == "/huge":
            self._send(200, b"x" * 3_000_000, "text/plain")
        elif self.path == "/hang":
            self.release.wait(30)  # held until the test ends: never answers in time
        elif self.path == "/host":
            self._send(200, f"Host header: {self.headers['Host']}".encode(), "text/plain")
        elif self.path == "/binary":
            self._send(200, b"\x89PNG....", "image/png")
        else:
            self._send(404, b"not here", "text/plain")

    def _send(self, status: int, body: bytes, content_type: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            self.wfile.write(body)  # the reader may stop at its cap

    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture
def site() -> Iterator[str]:
    """Base URL of a server on 127.0.0.1 with /article, /redirect, /huge, /hang, /binary."""
    release = threading.Event()
    handler = type("Handler", (_Handler,), {"release": release})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    release.set()
    server.shutdown()
    server.server_close()


async def call(tool: Tool, **arguments: Any) -> Any:
    """Run ``tool`` as the invoke activity would, with ``arguments`` checked by its model."""
    context = ToolContext(
        agent="tester",
        activation_id=str(ULID()),
        conversation_id=str(ULID()),
        channel=ChannelRef(service="terminal", channel="main"),
        person_id=str(ULID()),
    )
    run = ToolRun(context=context, now=datetime.now(UTC), call_id=str(ULID()))
    return await tool.run(run, tool.input_model.model_validate(arguments))
