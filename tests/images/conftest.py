"""A local server speaking the OpenAI images API, and a worker whose images endpoint it is."""

from __future__ import annotations

import base64
import json
import threading
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from temporalio.client import Client

from activities.gateway.providers.scripted import ScriptRule
from observability.metering.hub import UsageMeter
from tests.harness import Harness, Stack, running_worker

PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
)
"""A one-pixel PNG: what the fake endpoint draws."""


class ImagesServer:
    """``POST /v1/images/generations`` and ``/v1/images/edits`` answering a PNG, or the status
    the test sets. An edit's multipart form is kept raw, with its path."""

    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        self.fail_with: int | None = None
        self.answer_with_url = False
        """Answer with a link to the image (as some servers do) instead of inline base64."""
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                raw = self.rfile.read(int(self.headers["Content-Length"]))
                if self.path == "/v1/images/edits":
                    outer.requests.append({"path": self.path, "form": raw})
                else:
                    outer.requests.append({"path": self.path, **json.loads(raw)})
                if self.path not in ("/v1/images/generations", "/v1/images/edits"):
                    self._reply(404, {"error": {"message": "no such route"}})
                elif outer.fail_with is not None:
                    self._reply(outer.fail_with, {"error": {"message": "the renderer broke"}})
                elif outer.answer_with_url:
                    link = f"{outer.url}/files/render.png"
                    self._reply(200, {"created": 1, "data": [{"url": link}]})
                else:
                    encoded = base64.b64encode(PNG).decode()
                    self._reply(200, {"created": 1, "data": [{"b64_json": encoded}]})

            def do_GET(self) -> None:
                self.send_response(200 if self.path == "/v1/files/render.png" else 404)
                self.send_header("Content-Type", "image/png")
                self.send_header("Content-Length", str(len(PNG)))
                self.end_headers()
                self.wfile.write(PNG)

            def _reply(self, status: int, payload: dict[str, Any]) -> None:
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def __enter__(self) -> ImagesServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()


@pytest.fixture
def images_server() -> Iterator[ImagesServer]:
    with ImagesServer() as server:
        yield server


@asynccontextmanager
async def images_worker(
    client: Client,
    stack: Stack,
    server: ImagesServer,
    home: Path,
    *,
    rules: list[ScriptRule],
    meters: list[UsageMeter] | None = None,
) -> AsyncIterator[Harness]:
    """A worker rendering through ``server``, keeping images and prices under ``home``."""
    (home / "prices.toml").write_text('[units."test-image"]\ndefault = 0.04\n')
    overrides: dict[str, object] = {
        "home": home,
        "images": {"base_url": server.url, "model": "test-image", "size": "256x256"},
    }
    async with running_worker(
        client, stack, rules=rules, settings_overrides=overrides, meters=meters
    ) as harness:
        yield harness
