"""What a picture's header declares, read without decoding it, and its metadata taken out.

A 50 KB PNG can declare 100,000 x 100,000 pixels: decoding it would take 30 GB. Pictures are
measured from their header alone (PNG's IHDR, JPEG's start-of-frame, WebP's frame header) and
refused past a pixel limit before anything decodes them. Before a picture goes to a vision
model its metadata (EXIF, XMP, comments, text chunks) is dropped: it is text someone else
wrote, and no description should read it as part of the picture.
"""

from __future__ import annotations

import struct

from activities.images.files import NotAPictureError, picture_suffix

_JPEG_FRAMES = frozenset(range(0xC0, 0xD0)) - {0xC4, 0xC8, 0xCC}
"""Start-of-frame markers (every coding); 0xC4, 0xC8 and 0xCC are tables, not frames."""
_JPEG_STANDALONE = frozenset({0x01, *range(0xD0, 0xD8)})
_JPEG_DROPPED = frozenset({*range(0xE1, 0xF0), 0xFE})
"""APP1-APP15 (EXIF, XMP, ICC, vendor notes) and comments; APP0 (JFIF) stays."""
_PNG_DROPPED = frozenset({b"tEXt", b"zTXt", b"iTXt", b"eXIf", b"tIME"})
_WEBP_DROPPED = frozenset({b"EXIF", b"XMP "})


def dimensions(content: bytes) -> tuple[int, int]:
    """The width and height ``content``'s header declares.

    Raises:
        NotAPictureError: Not a PNG, JPEG or WebP picture, or its size cannot be read.
    """
    suffix = picture_suffix(content)
    found = {".png": _png_size, ".jpg": _jpeg_size, ".webp": _webp_size}[suffix](content)
    if found is None or found[0] <= 0 or found[1] <= 0:
        raise NotAPictureError(f"a {suffix[1:].upper()} whose size cannot be read")
    return found


def _png_size(content: bytes) -> tuple[int, int] | None:
    if len(content) < 24 or content[12:16] != b"IHDR":
        return None
    width, height = struct.unpack(">II", content[16:24])
    return int(width), int(height)


def _jpeg_segments(content: bytes) -> list[tuple[int, int, int]]:
    """Each segment before the scan: (marker, start, end), start at its 0xFF."""
    segments: list[tuple[int, int, int]] = []
    at = 2
    while at + 1 < len(content):
        if content[at] != 0xFF:
            return segments
        marker = content[at + 1]
        if marker == 0xFF:  # fill byte
            at += 1
            continue
        if marker in _JPEG_STANDALONE:
            segments.append((marker, at, at + 2))
            at += 2
            continue
        if marker in (0xD9, 0xDA) or at + 4 > len(content):
            segments.append((marker, at, at))
            return segments
        (length,) = struct.unpack(">H", content[at + 2 : at + 4])
        end = at + 2 + length
        if length < 2 or end > len(content):
            return segments
        segments.append((marker, at, end))
        at = end
    return segments


def _jpeg_size(content: bytes) -> tuple[int, int] | None:
    for marker, start, end in _jpeg_segments(content):
        if marker in _JPEG_FRAMES and end - start >= 9:
            height, width = struct.unpack(">HH", content[start + 5 : start + 9])
            return int(width), int(height)
    return None


def _webp_size(content: bytes) -> tuple[int, int] | None:
    chunk = content[12:16]
    if chunk == b"VP8 " and len(content) >= 30 and content[23:26] == b"\x9d\x01\x2a":
        width, height = struct.unpack("<HH", content[26:30])
        return int(width) & 0x3FFF, int(height) & 0x3FFF
    if chunk == b"VP8L" and len(content) >= 25 and content[20] == 0x2F:
        (bits,) = struct.unpack("<I", content[21:25])
        return (bits & 0x3FFF) + 1, ((bits >> 14) & 0x3FFF) + 1
    if chunk == b"VP8X" and len(content) >= 30:
        width = int.from_bytes(content[24:27], "little") + 1
        height = int.from_bytes(content[27:30], "little") + 1
        return width, height
    return None


def without_metadata(content: bytes) -> bytes:
    """``content`` with its metadata dropped; as it was if its structure cannot be followed."""
    suffix = picture_suffix(content)
    if suffix == ".jpg":
        return _jpeg_stripped(content)
    if suffix == ".png":
        return _png_stripped(content)
    return _webp_stripped(content)


def _jpeg_stripped(content: bytes) -> bytes:
    segments = _jpeg_segments(content)
    if not segments or segments[-1][0] != 0xDA:
        return content  # no scan found: nothing safe to rebuild
    kept = [content[:2]]
    kept += [
        content[start:end] for marker, start, end in segments[:-1] if marker not in _JPEG_DROPPED
    ]
    kept.append(content[segments[-1][1] :])
    return b"".join(kept)


def _png_stripped(content: bytes) -> bytes:
    kept, at = [content[:8]], 8
    while at + 12 <= len(content):
        (length,) = struct.unpack(">I", content[at : at + 4])
        end = at + 12 + length
        if end > len(content):
            return content
        if content[at + 4 : at + 8] not in _PNG_DROPPED:
            kept.append(content[at:end])
        at = end
    return b"".join(kept)


def _webp_stripped(content: bytes) -> bytes:
    kept, at = [], 12
    while at + 8 <= len(content):
        name = content[at : at + 4]
        (length,) = struct.unpack("<I", content[at + 4 : at + 8])
        end = at + 8 + length + (length & 1)
        if end > len(content) + 1:
            return content
        chunk = content[at:end]
        if name == b"VP8X" and len(chunk) >= 9:
            chunk = chunk[:8] + bytes([chunk[8] & ~0x0C & 0xFF]) + chunk[9:]  # no EXIF, no XMP
        if name not in _WEBP_DROPPED:
            kept.append(chunk)
        at = end
    body = b"WEBP" + b"".join(kept)
    return b"RIFF" + struct.pack("<I", len(body)) + body
