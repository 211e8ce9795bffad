"""A compressed body is inflated as it arrives and never past the size cap.

A server on 127.0.0.1 sends a gzip bomb (1 MB that inflates to 1 GiB); the memory the read
allocates is measured with tracemalloc, so the test judges what was held, not how long it took.
"""

from __future__ import annotations

import contextlib
import struct
import threading
import tracemalloc
import zlib
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from activities.tools.registry import ToolError
from activities.tools.web.read_url import ReadUrl
from schemas.web import ReadUrlResult, WebSettings
from tests.web.conftest import ARTICLE, call

LOCAL = WebSettings(allow_private=True, timeout_seconds=20.0, max_bytes=2_000_000)
MIB = 1 << 20


def gzip_bomb(mebibytes: int) -> bytes:
    """A valid gzip member of ``mebibytes`` MiB of ``x``, about 1 KB per MiB.

    One MiB is deflated with a full flush (which resets the history), so its blocks stand
    alone and repeat; an empty final block and the true CRC and length close the member.
    """
    chunk = b"x" * MIB
    deflate = zlib.compressobj(9, zlib.DEFLATED, -zlib.MAX_WBITS)
    blocks = deflate.compress(chunk) + deflate.flush(zlib.Z_FULL_FLUSH)
    final = zlib.compressobj(9, zlib.DEFLATED, -zlib.MAX_WBITS).flush()
    crc = 0
    for _ in range(mebibytes):
        crc = zlib.crc32(chunk, crc)
    header = b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x02\xff"
    trailer = struct.pack("<II", crc, (mebibytes * MIB) & 0xFFFFFFFF)
    return header + blocks * mebibytes + final + trailer


def _gzip(data: bytes) -> bytes:
    deflate = zlib.compressobj(6, zlib.DEFLATED, zlib.MAX_WBITS | 16)
    return deflate.compress(data) + deflate.flush()


def _raw_deflate(data: bytes) -> bytes:
    deflate = zlib.compressobj(6, zlib.DEFLATED, -zlib.MAX_WBITS)
    return deflate.compress(data) + deflate.flush()


BOMB = gzip_bomb(1024)
ROUTES: dict[str, tuple[bytes, str, str]] = {
    "/bomb": (BOMB, "gzip", "text/plain"),
    "/article.gz": (_gzip(ARTICLE.encode()), "gzip", "text/html; charset=utf-8"),
    "/article.zlib": (zlib.compress(ARTICLE.encode()), "deflate", "text/html; charset=utf-8"),
    "/article.deflate": (_raw_deflate(ARTICLE.encode()), "deflate", "text/html; charset=utf-8"),
    "/article.br": (b"\x8b\x03\x80hello\x03", "br", "text/plain"),
    "/corrupt.gz": (b"\x1f\x8b\x08\x00" + b"\xff" * 64, "gzip", "text/plain"),
}


class _Handler(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        body, coding, content_type = ROUTES[self.path]
        self.send_response(200)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Encoding", coding)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            self.wfile.write(body)  # the reader stops at its cap

    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture
def compressed_site() -> Iterator[str]:
    """A server on 127.0.0.1 sending compressed bodies (see ``ROUTES``)."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def test_the_bomb_is_what_it_claims() -> None:
    # 1 MB on the wire, 1 GiB unpacked: inflate it in bounded steps, as a browser would.
    inflate = zlib.decompressobj(zlib.MAX_WBITS | 16)
    unpacked, pending = 0, BOMB
    while pending:
        unpacked += len(inflate.decompress(pending, 64 * MIB))
        pending = inflate.unconsumed_tail
    assert len(BOMB) < 1_100_000
    assert unpacked == 1024 * MIB and inflate.eof


async def test_a_gzip_bomb_is_cut_at_the_cap_while_it_inflates(compressed_site: str) -> None:
    tracemalloc.start()
    try:
        before, _ = tracemalloc.get_traced_memory()
        tracemalloc.reset_peak()
        result: ReadUrlResult = await call(ReadUrl(LOCAL), url=f"{compressed_site}/bomb")
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()

    assert result.truncated
    assert result.note is not None
    assert "2,000,000 bytes" in result.note and "gzip" in result.note
    assert result.text == "x" * LOCAL.max_chars
    # The cap's worth is held a few times over (buffer, bytes, text), never a network
    # chunk's inflation (64 KB of this gzip is 64 MB).
    assert peak - before < 5 * LOCAL.max_bytes, f"the read grew by {peak - before:,} bytes"


@pytest.mark.parametrize("path", ["/article.gz", "/article.zlib", "/article.deflate"])
async def test_a_compressed_page_is_read_whole(compressed_site: str, path: str) -> None:
    result: ReadUrlResult = await call(ReadUrl(LOCAL), url=f"{compressed_site}{path}")

    assert result.title == "Tides of Brittany"
    assert "fourteen metres" in result.text
    assert not result.truncated and result.note is None


@pytest.mark.parametrize(
    ("path", "reason"),
    [
        ("/article.br", "compressed with br, which is not read"),
        ("/corrupt.gz", "gzip body is corrupt"),
    ],
)
async def test_an_unread_or_corrupt_coding_is_one_line(
    compressed_site: str, path: str, reason: str
) -> None:
    with pytest.raises(ToolError, match=reason):
        await call(ReadUrl(LOCAL), url=f"{compressed_site}{path}")
