"""Reading a response body within the size cap, decompressing as the bytes arrive.

The cap holds for the bytes after decompression, and it holds while they are produced: each
compressed chunk is inflated at most up to the room left under the cap, so a 1 MB gzip that
expands to 1 GB costs the cap in memory, not the gigabyte. (httpx's own decoding inflates each
network chunk in one piece, so a single 64 KB chunk of such a body becomes 64 MB at once.)
Only gzip and deflate are asked for and read; any other content coding is refused in one line.
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass

import httpx

ACCEPT_ENCODING = "gzip, deflate"
"""What ``read_url`` asks servers for: the codings read here, and nothing else."""

_STEP = 1 << 16
"""The most one inflate call produces: the output is never held twice over in one piece."""
_WBITS = {"gzip": zlib.MAX_WBITS | 16, "x-gzip": zlib.MAX_WBITS | 16, "deflate": zlib.MAX_WBITS}


class BodyError(Exception):
    """The body cannot be read as sent; the message says why in one line."""


@dataclass(frozen=True)
class Body:
    """The body's first ``limit`` bytes (decompressed) and whether there was more."""

    data: bytes
    truncated: bool
    encoding: str | None
    """The content coding it was sent with (``gzip``, ``deflate``), if any."""


def content_coding(response: httpx.Response) -> str | None:
    """The one compression the body was sent with, or ``None`` for none.

    Raises:
        BodyError: A coding not read here (br, zstd, ...), or more than one stacked.
    """
    header: str = response.headers.get("content-encoding", "")
    codings = [part.strip().lower() for part in header.split(",")]
    codings = [coding for coding in codings if coding not in ("", "identity")]
    if not codings:
        return None
    if len(codings) > 1:
        raise BodyError(f"the page is compressed more than once ({header}), which is not read")
    if codings[0] not in _WBITS:
        raise BodyError(f"the page is compressed with {codings[0]}, which is not read")
    return codings[0]


class _Inflater:
    """Inflates at most a given number of bytes at a time, keeping the rest of the input."""

    def __init__(self, coding: str) -> None:
        self._coding = coding
        self._inflate = zlib.decompressobj(_WBITS[coding])
        self._pending = b""
        self._started = False

    def feed(self, chunk: bytes) -> None:
        self._pending += chunk

    def take(self, most: int) -> bytes:
        """Up to ``most`` (>= 1) bytes of output from the input fed so far."""
        if not self._pending or self._inflate.eof:
            return b""
        try:
            out = self._inflate.decompress(self._pending, most)
        except zlib.error:
            if self._coding != "deflate" or self._started:
                raise BodyError(f"the page's {self._coding} body is corrupt") from None
            # Some servers send "deflate" as a raw stream, without the zlib header.
            self._inflate = zlib.decompressobj(-zlib.MAX_WBITS)
            return self.take(most)
        self._started = True
        self._pending = self._inflate.unconsumed_tail
        return out

    @property
    def hungry(self) -> bool:
        """Whether everything fed has been inflated (more input is needed for more output)."""
        return not self._pending or self._inflate.eof


async def read_capped(response: httpx.Response, limit: int) -> Body:
    """Read ``response``'s body as it arrives: at most ``limit`` bytes after decompression.

    The compressed bytes read are held to ``limit`` too, so a body that never inflates to
    anything (or pads itself) stops at the cap as well as at the time cap.

    Raises:
        BodyError: An unread content coding, or a corrupt compressed body.
    """
    coding = content_coding(response)
    body = bytearray()
    received = 0
    inflater = _Inflater(coding) if coding is not None else None
    async for chunk in response.aiter_raw():
        received += len(chunk)
        if inflater is None:
            body += chunk
        else:
            inflater.feed(chunk)
            while len(body) <= limit and not inflater.hungry:
                body += inflater.take(min(limit + 1 - len(body), _STEP))
        if len(body) > limit or received > limit:
            del body[limit:]  # in place: a slice would hold a second copy of the cap
            return Body(data=bytes(body), truncated=True, encoding=coding)
    return Body(data=bytes(body), truncated=False, encoding=coding)
