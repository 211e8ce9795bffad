"""A tiny OpenAI-compatible embeddings server on 127.0.0.1, for the encoding-service option.

Vectors are a deterministic function of the text (a hashed bag of words), so similar texts
get similar vectors; ``mode`` makes it misbehave the ways real services do.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


def bag_of_words(text: str, dimensions: int) -> list[float]:
    vector = [0.0] * dimensions
    for word in re.findall(r"[a-z0-9]+", text.lower()):
        slot = int.from_bytes(hashlib.sha256(word.encode()).digest()[:4], "big") % dimensions
        vector[slot] += 1.0
    norm = math.sqrt(sum(x * x for x in vector)) or 1.0
    return [2.0 * x / norm for x in vector]  # deliberately not unit length


@dataclass
class FakeService:
    dimensions: int = 16
    mode: str = "ok"  # ok | error | wrong-size | garbage
    requests: list[dict[str, object]] = field(default_factory=list)
    port: int = 0

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"


@contextmanager
def fake_service(dimensions: int = 16) -> Iterator[FakeService]:
    service = FakeService(dimensions=dimensions)

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: object) -> None:
            pass

        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            service.requests.append(body)
            if self.path != "/v1/embeddings" or service.mode == "error":
                self._send(500, {"error": {"message": "boom", "type": "server_error"}})
                return
            texts = body["input"] if isinstance(body["input"], list) else [body["input"]]
            size = service.dimensions + (1 if service.mode == "wrong-size" else 0)
            data = [
                {"object": "embedding", "index": i, "embedding": bag_of_words(t, size)}
                for i, t in reversed(list(enumerate(texts)))  # out of order on purpose
            ]
            if service.mode == "garbage":
                data = [{"object": "embedding", "index": 0, "embedding": "not a vector"}]
            self._send(
                200,
                {
                    "object": "list",
                    "data": data,
                    "model": body["model"],
                    "usage": {"prompt_tokens": 1, "total_tokens": 1},
                },
            )

        def _send(self, status: int, payload: object) -> None:
            raw = json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(raw)))
            self.end_headers()
            self.wfile.write(raw)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    service.port = server.server_address[1]
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield service
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)
