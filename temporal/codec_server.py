"""The codec endpoint: lets the Temporal Web UI (and the ``temporal`` CLI) read sealed payloads.

It speaks Temporal's remote codec protocol: ``POST /decode`` and ``POST /encode`` with
``{"payloads": [...]}`` (payloads in protobuf JSON), answered the same way, with CORS for the
UI's origin. What a client seals is sealed with the key of the agent it names (the URL
``/agents/{handle}/encode``, the ``X-Persyn-Agent`` header, each payload's ``persyn-agent``
metadata or its JSON's ``agent`` field), so it goes when that agent is shredded or deleted.
``persyn up`` runs it beside the embedded stack (:func:`command`) and points the dev server's
UI at it. A payload whose key was shredded decodes to a short placeholder instead of failing
the whole page (the payload transforms are ``temporal/codec_payloads.py``).

It listens on 127.0.0.1 by default: whoever reaches it reads every agent's payloads, so expose
it beyond the host only behind the same access control as the UI. Three more locks, because a
browser reaches loopback too: a request whose ``Host`` is not the endpoint's own (127.0.0.1,
localhost, [::1] at its port, or ``PERSYN_CODEC_ALLOWED_HOSTS``) is refused, so a page that
rebinds its own domain to 127.0.0.1 reads nothing; CORS answers only the Web UI's origins; and
with ``PERSYN_CODEC_TOKEN`` set, every request must carry it as a bearer token.
"""

from __future__ import annotations

import asyncio
import hmac
import json
import logging
import os
import signal
import sys
import threading
from collections.abc import Coroutine, Sequence
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, TypeVar

from google.protobuf import json_format
from temporalio.api.common.v1 import Payloads

from schemas.codec import get_codec_settings
from schemas.settings import Settings, get_settings
from temporal.client import keyring
from temporal.codec import AgentPayloadCodec
from temporal.codec_payloads import EncodeRefusedError, decode_for_display, encode_for_client

log = logging.getLogger("persyn.codec")
T = TypeVar("T")
_MAX_BODY = 8 * 1024 * 1024  # a page of payloads, each at most Temporal's 2 MB


def codec_endpoint(settings: Settings) -> str:
    """Where the stack's codec endpoint listens."""
    return f"http://127.0.0.1:{get_codec_settings().port}"


def ui_origins(settings: Settings) -> frozenset[str]:
    """The Web UI origins a browser may call the endpoint from."""
    port = settings.temporal_ui_port
    configured = get_codec_settings().ui_origins
    return frozenset(
        {f"http://127.0.0.1:{port}", f"http://localhost:{port}", settings.ui_url, *configured}
    )


def own_hosts(port: int, extra: Sequence[str] = ()) -> frozenset[str]:
    """``Host`` values the endpoint answers: its loopback names at ``port``, and ``extra``."""
    names = ("127.0.0.1", "localhost", "[::1]")
    return frozenset({f"{n}:{port}" for n in names} | {h.lower() for h in extra})


AGENT_HEADER = "X-Persyn-Agent"
"""Request header naming the agent the payloads to encode are for (``--codec-header``)."""


def _route(path: str) -> tuple[str, str | None] | None:
    """``(operation, agent)`` of a request path: ``[...]/encode`` or ``[...]/agents/{h}/encode``."""
    parts = [p for p in path.split("?", 1)[0].split("/") if p]
    if not parts or parts[-1] not in ("encode", "decode"):
        return None
    if len(parts) >= 3 and parts[-3] == "agents":
        return parts[-1], parts[-2]
    return parts[-1], None


class CodecServer:
    """The HTTP endpoint, serving on a thread; codec work runs on its own event loop."""

    def __init__(
        self,
        codec: AgentPayloadCodec,
        *,
        port: int,
        origins: frozenset[str],
        host: str = "127.0.0.1",
        allowed_hosts: Sequence[str] = (),
        token: str | None = None,
    ) -> None:
        self.codec = codec
        self.origins = origins
        self.token = token
        self._extra_hosts = tuple(allowed_hosts)
        self._loop = asyncio.new_event_loop()
        self._loop_thread = threading.Thread(target=self._loop.run_forever, daemon=True)
        self._http = ThreadingHTTPServer((host, port), _handler(self))
        self._http.daemon_threads = True
        self._http_thread = threading.Thread(target=self._http.serve_forever, daemon=True)

    @property
    def port(self) -> int:
        """The port it listens on (useful when it was started on port 0)."""
        return int(self._http.server_address[1])

    def answers_host(self, host: str | None) -> bool:
        """Whether a request with this ``Host`` header is for this endpoint."""
        return host is not None and host.lower() in own_hosts(self.port, self._extra_hosts)

    def authorized(self, header: str | None) -> bool:
        """Whether an ``Authorization`` header carries the token (always, with none set)."""
        if self.token is None:
            return True
        expected = f"Bearer {self.token}".encode()
        return header is not None and hmac.compare_digest(header.encode(), expected)

    def start(self) -> None:
        """Serve in the background."""
        self._loop_thread.start()
        self._http_thread.start()

    def stop(self) -> None:
        """Stop serving and close the loop."""
        self._http.shutdown()
        self._http.server_close()
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._loop_thread.join(5)

    def run(self, work: Coroutine[Any, Any, T]) -> T:
        """Run ``work`` on the codec's loop and wait for it (from a request thread)."""
        return asyncio.run_coroutine_threadsafe(work, self._loop).result(timeout=30)


def _handler(server: CodecServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            log.debug("%s " + format, self.address_string(), *args)

        def _cors(self) -> None:
            origin = self.headers.get("Origin")
            if origin in server.origins:
                self.send_header("Access-Control-Allow-Origin", origin)
                self.send_header("Access-Control-Allow-Credentials", "true")
                self.send_header("Vary", "Origin")

        def _reply(self, status: HTTPStatus, body: bytes, content_type: str) -> None:
            self.send_response(status)
            self._cors()
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def _error(self, status: HTTPStatus, message: str) -> None:
            self._reply(status, json.dumps({"error": message}).encode(), "application/json")

        def _refused(self) -> bool:
            """Refuse a request for another host, or without the token; ``True`` if refused."""
            if not server.answers_host(self.headers.get("Host")):
                # DNS rebinding: a page whose domain now points at 127.0.0.1 sends its own Host.
                self._error(
                    HTTPStatus.MISDIRECTED_REQUEST,
                    "this codec endpoint answers only its own host name: add yours to "
                    "PERSYN_CODEC_ALLOWED_HOSTS if a proxy serves it",
                )
                return True
            if self.command != "OPTIONS" and not server.authorized(
                self.headers.get("Authorization")
            ):
                self._error(
                    HTTPStatus.UNAUTHORIZED,
                    "send Authorization: Bearer <PERSYN_CODEC_TOKEN> (the Web UI and the temporal "
                    "CLI can send it)",
                )
                return True
            return False

        def do_OPTIONS(self) -> None:
            if self._refused():
                return
            self.send_response(HTTPStatus.NO_CONTENT)
            self._cors()
            self.send_header("Access-Control-Allow-Methods", "POST, OPTIONS")
            allowed = f"Content-Type, X-Namespace, Authorization, {AGENT_HEADER}"
            self.send_header("Access-Control-Allow-Headers", allowed)
            self.send_header("Access-Control-Max-Age", "600")
            self.end_headers()

        def do_POST(self) -> None:
            if self._refused():
                return
            route = _route(self.path)
            if route is None:
                self._error(
                    HTTPStatus.NOT_FOUND, "POST /encode or /decode (or /agents/{handle}/encode)"
                )
                return
            path, agent = route
            agent = agent or self.headers.get(AGENT_HEADER) or None
            try:
                length = int(self.headers.get("Content-Length") or 0)
            except ValueError:
                length = -1
            if not 0 <= length <= _MAX_BODY:
                self._error(
                    HTTPStatus.REQUEST_ENTITY_TOO_LARGE,
                    f"send a Content-Length of at most {_MAX_BODY}",
                )
                return
            try:
                payloads = json_format.Parse(self.rfile.read(length), Payloads()).payloads
            except json_format.ParseError as err:
                self._error(HTTPStatus.BAD_REQUEST, f'send {{"payloads": [...]}}: {err}')
                return
            try:
                if path == "decode":
                    result = server.run(decode_for_display(server.codec, payloads))
                else:
                    result = server.run(encode_for_client(server.codec, payloads, agent=agent))
            except EncodeRefusedError as err:
                self._error(HTTPStatus.BAD_REQUEST, str(err))
                return
            except Exception as err:  # a bug or the database: the UI shows the message
                log.exception("codec %s failed", path)
                self._error(HTTPStatus.INTERNAL_SERVER_ERROR, f"codec failed: {err}")
                return
            body = json_format.MessageToJson(Payloads(payloads=result), indent=None)
            self._reply(HTTPStatus.OK, body.encode(), "application/json")

    return Handler


def build(settings: Settings, *, port: int | None = None) -> CodecServer:
    """The endpoint for the deployment ``settings`` describe (not started)."""
    # Always asking PostgreSQL whether a key is live: a shred is refused here at once,
    # whatever trust period the workers were given.
    codec = get_codec_settings()
    token = codec.token.get_secret_value() if codec.token is not None else None
    return CodecServer(
        AgentPayloadCodec(keyring(settings, cache_seconds=0)),
        port=codec.port if port is None else port,
        origins=ui_origins(settings),
        host=codec.host,
        allowed_hosts=codec.allowed_hosts,
        token=token,
    )


def command() -> list[str]:
    """The endpoint's command line, for whatever runs the stack's processes."""
    return [sys.executable, "-m", "temporal.codec_server"]


def main() -> None:
    """Entry point: serve until SIGTERM or SIGINT."""
    logging.basicConfig(
        level=os.environ.get("PERSYN_LOG_LEVEL", "INFO"),
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    settings = get_settings()
    server = build(settings)
    stop = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: stop.set())
    server.start()
    log.info("codec endpoint at %s for %s", codec_endpoint(settings), sorted(server.origins))
    stop.wait()
    server.stop()


if __name__ == "__main__":
    main()
