"""A real HTTP server on 127.0.0.1 that answers like OpenAI and Anthropic, and fails on cue.

It serves ``POST /v1/chat/completions`` and ``POST /v1/messages`` (JSON, or server-sent events
when the request asks to stream) and ``POST /v1/audio/transcriptions`` (a multipart form,
answered with ``transcript``; its raw form is recorded under ``body["form"]``), records every
request, and plays queued faults first::

    with FakeProviderServer(reply="Hi.") as server:
        server.fail(429, times=2, retry_after=1)
        server.delay(5)                      # the next request answers after 5 s
        ...
        assert len(server.requests) == 4

``server.call_tools([("calculate", {"expression": "2+2"})])`` makes the next answer a tool-call
reply (in either format, streamed or not); string arguments are sent as raw text.

The official SDKs talk to it over real sockets, so their error mapping, streaming parsers and
timeouts are exercised exactly as against the real services.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from tests.fakes import wire


@dataclass
class Fault:
    """What to do instead of (or before) answering normally."""

    status: int = 0
    retry_after: float | None = None
    delay: float = 0.0
    in_stream: bool = False
    times: int | None = 1  # None: every request from now on


@dataclass(frozen=True)
class Recorded:
    """A request the server received."""

    path: str
    headers: dict[str, str]
    body: dict[str, Any]


class FakeProviderServer:
    """OpenAI and Anthropic endpoints with fault injection, for one test."""

    def __init__(self, reply: str = "Hello from the fake provider.") -> None:
        self.reply = reply
        self.transcript = "Hello from the fake transcriber."
        self.structured: Any = {"ok": True}
        self.response_formats: Dialect | None = None
        """Set: refuse a ``response_format`` of any other type, as that server does."""
        self.requests: list[Recorded] = []
        self.received = threading.Event()
        """Set once a request has arrived (a test that must act while one is in flight)."""
        self._faults: list[Fault] = []
        self._tool_calls: list[wire.ToolCalls] = []
        self._lock = threading.Lock()
        self._http = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        # A delayed answer must not hold up shutdown, nor a client that gave up on it.
        self._http.daemon_threads = True
        self._http.block_on_close = False
        self._thread = threading.Thread(
            target=self._http.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )

    @property
    def url(self) -> str:
        """Base URL for Anthropic clients (they add ``/v1/messages``)."""
        host, port = self._http.server_address[:2]
        return f"http://{host!s}:{port}"

    @property
    def openai_url(self) -> str:
        """Base URL for OpenAI clients (they add ``/chat/completions``)."""
        return f"{self.url}/v1"

    def fail(
        self,
        status: int,
        *,
        times: int | None = 1,
        retry_after: float | None = None,
        in_stream: bool = False,
    ) -> None:
        """Answer the next ``times`` requests (``None``: all) with ``status``.

        ``in_stream`` sends the error as an event inside a 200 stream, as Anthropic does when
        it becomes overloaded mid-reply.
        """
        self._queue(Fault(status=status, retry_after=retry_after, in_stream=in_stream, times=times))

    def delay(self, seconds: float, *, times: int = 1) -> None:
        """Answer the next ``times`` requests only after ``seconds``."""
        self._queue(Fault(delay=seconds, times=times))

    def call_tools(self, calls: wire.ToolCalls) -> None:
        """Answer the next request by calling ``calls`` (name, arguments) instead of replying."""
        with self._lock:
            self._tool_calls.append(calls)

    def _next_calls(self) -> wire.ToolCalls | None:
        with self._lock:
            return self._tool_calls.pop(0) if self._tool_calls else None

    def _queue(self, fault: Fault) -> None:
        with self._lock:
            self._faults.append(fault)

    def _take(self, request: Recorded) -> Fault | None:
        with self._lock:
            self.requests.append(request)
            self.received.set()
            if not self._faults:
                return None
            fault = self._faults[0]
            if fault.times is not None:
                fault.times -= 1
                if fault.times == 0:
                    self._faults.pop(0)
            return fault

    def start(self) -> FakeProviderServer:
        """Serve on a background thread."""
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving and release the port."""
        self._http.shutdown()
        self._http.server_close()

    def __enter__(self) -> FakeProviderServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


@dataclass(frozen=True)
class Dialect:
    """The ``response_format`` types a compatible server accepts, and how it refuses others."""

    accepts: frozenset[str]
    status: int
    message: str


LLAMA_CPP_PYTHON = Dialect(
    accepts=frozenset({"text", "json_object"}),
    status=500,
    message="1 validation error for CreateChatCompletionRequest\nresponse_format.type\n  "
    "Input should be 'text' or 'json_object' [type=literal_error, input_value='json_schema']",
)
"""llama-cpp-python's server (``python -m llama_cpp.server``): no ``json_schema``."""

OLLAMA = Dialect(
    accepts=frozenset({"text", "json_object", "json_schema"}),
    status=400,
    message="invalid response_format",
)
"""Ollama's OpenAI-compatible endpoint (0.5 and later): ``json_schema`` accepted."""

NO_RESPONSE_FORMAT = Dialect(
    accepts=frozenset({"text"}),
    status=400,
    message="response_format is not supported by this server",
)
"""A server with no structured replies at all."""


def _refusal(dialect: Dialect | None, body: dict[str, Any]) -> tuple[int, Any] | None:
    kind = (body.get("response_format") or {}).get("type")
    if dialect is None or kind is None or kind in dialect.accepts:
        return None
    return dialect.status, {"error": {"message": dialect.message, "type": "invalid_request"}}


def _asks_for_json(body: dict[str, Any]) -> bool:
    """A schema by ``response_format``, or stated in the instructions (the ``prompt`` form)."""
    kind = (body.get("response_format") or {}).get("type")
    if kind in ("json_schema", "json_object"):
        return True
    system = next((m for m in body.get("messages", []) if m.get("role") == "system"), None)
    return system is not None and "JSON Schema" in str(system.get("content", ""))


def _handler(server: FakeProviderServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            pass  # keep test output clean

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length", 0))
            raw = self.rfile.read(length)
            if self.headers.get("Content-Type", "").startswith("multipart/form-data"):
                body: dict[str, Any] = {"form": raw}
            else:
                body = json.loads(raw or b"{}")
            recorded = Recorded(self.path, {k.lower(): v for k, v in self.headers.items()}, body)
            fault = server._take(recorded) or Fault()
            try:
                if fault.delay:
                    time.sleep(fault.delay)
                self._answer(body, fault)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client gave up first (a timeout test)

        def _answer(self, body: dict[str, Any], fault: Fault) -> None:
            anthropic = self.path == "/v1/messages"
            routes = ("/v1/messages", "/v1/chat/completions", "/v1/audio/transcriptions")
            if self.path not in routes:
                self._json(404, {"error": {"message": f"no route {self.path}"}})
            elif (refusal := _refusal(server.response_formats, body)) is not None:
                self._json(refusal[0], refusal[1])
            elif fault.status and not fault.in_stream:
                error = wire.anthropic_error if anthropic else wire.openai_error
                headers = {"retry-after": f"{fault.retry_after:g}"} if fault.retry_after else {}
                self._json(fault.status, error(fault.status), headers)
            elif self.path == "/v1/audio/transcriptions":
                self._json(200, {"text": server.transcript})
            elif anthropic and body.get("stream"):
                calls = server._next_calls()
                text = "" if calls else server.reply
                self._stream(wire.anthropic_stream(body, text, fail=fault.status, calls=calls))
            elif anthropic:
                calls = server._next_calls()
                text = "" if calls else server.reply
                self._json(200, wire.anthropic_message(body, text, server.structured, calls))
            elif body.get("stream"):
                calls = server._next_calls()
                text = "" if calls else server.reply
                if _asks_for_json(body):
                    text = json.dumps(server.structured)
                self._stream(wire.openai_stream(body, text, calls))
            else:
                calls = server._next_calls()
                text = "" if calls else server.reply
                if _asks_for_json(body):
                    text = json.dumps(server.structured)
                self._json(200, wire.openai_completion(body, text, calls))

        def _json(self, status: int, data: Any, headers: dict[str, str] | None = None) -> None:
            raw = json.dumps(data).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(raw)))
            for name, value in (headers or {}).items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(raw)

        def _stream(self, events: Iterable[bytes]) -> None:
            # HTTP/1.0 without a length: the body ends when the connection closes.
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.end_headers()
            for event in events:
                self.wfile.write(event)
                self.wfile.flush()

    return Handler
