"""The metadata of a GGUF model file, read from its header without loading the model.

A GGUF file begins with its metadata: key-value pairs (the architecture, the model's name, its
chat template, its vocabulary, ...) before any tensor. The model server needs only a few short
string values, so this reads the header and skips the long arrays (a vocabulary is tens of
thousands of strings) without keeping them. The layout is GGUF's, versions 2 and 3:
``GGUF``, a version, the tensor and key counts, then each key, its value type and its value.
"""

from __future__ import annotations

import struct
from collections.abc import Collection
from pathlib import Path
from typing import BinaryIO

MAGIC = b"GGUF"

MAX_STRING = 1 << 24
"""The longest string value read (a chat template is a few KB): a longer one means corruption."""

_FIXED = {0: 1, 1: 1, 2: 2, 3: 2, 4: 4, 5: 4, 6: 4, 7: 1, 10: 8, 11: 8, 12: 8}
"""Bytes of each fixed-size value type (u8, i8, u16, i16, u32, i32, f32, bool, u64, i64, f64)."""
_STRING, _ARRAY = 8, 9


class GGUFError(ValueError):
    """The file is not a GGUF model file this reader understands."""


def string_metadata(path: Path, keys: Collection[str]) -> dict[str, str]:
    """The string values of ``keys`` in the GGUF file at ``path`` (absent keys are left out).

    Raises:
        GGUFError: The file is not GGUF, is of an unknown version, or is cut short.
        OSError: It cannot be read.
    """
    wanted = set(keys)
    found: dict[str, str] = {}
    with path.open("rb") as file:
        if file.read(4) != MAGIC:
            raise GGUFError(f"{path} is not a GGUF file")
        (version,) = _unpack(file, "<I")
        if version not in (2, 3):
            raise GGUFError(f"{path} is GGUF version {version}; versions 2 and 3 are read")
        _tensors, count = _unpack(file, "<QQ")
        for _ in range(count):
            key = _string(file)
            (kind,) = _unpack(file, "<I")
            if kind == _STRING and key in wanted:
                found[key] = _string(file)
                if len(found) == len(wanted):
                    break
            else:
                _skip(file, kind)
    return found


def _unpack(file: BinaryIO, layout: str) -> tuple[int, ...]:
    size = struct.calcsize(layout)
    raw = file.read(size)
    if len(raw) != size:
        raise GGUFError("the GGUF header is cut short")
    return struct.unpack(layout, raw)


def _string(file: BinaryIO) -> str:
    (length,) = _unpack(file, "<Q")
    if length > MAX_STRING:
        raise GGUFError(f"a GGUF string of {length} bytes: the file is damaged")
    raw = file.read(length)
    if len(raw) != length:
        raise GGUFError("the GGUF header is cut short")
    return raw.decode("utf-8", errors="replace")


def _skip(file: BinaryIO, kind: int) -> None:
    if kind in _FIXED:
        file.seek(_FIXED[kind], 1)
    elif kind == _STRING:
        (length,) = _unpack(file, "<Q")
        file.seek(length, 1)
    elif kind == _ARRAY:
        item, count = _unpack(file, "<IQ")
        if item in _FIXED:
            file.seek(_FIXED[item] * count, 1)
        else:
            for _ in range(count):
                _skip(file, item)
    else:
        raise GGUFError(f"unknown GGUF value type {kind}")
