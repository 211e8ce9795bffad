"""A deployment secret of 32 bytes: given as base64, or kept in a private file made on first use.

The payload codec's master key and the internal key are both read this way. A file is created
with mode 0600 in a private directory, never through a link; of two processes starting together
the first writes it and the other reads what it wrote.
"""

from __future__ import annotations

import base64
import binascii
import secrets
from pathlib import Path

from store.private_files import create_private

KEY_BYTES = 32


def new_key() -> str:
    """A fresh key, base64."""
    return base64.b64encode(secrets.token_bytes(KEY_BYTES)).decode("ascii")


def decode_key(value: str, source: str, error: type[Exception]) -> bytes:
    """The key ``value`` (base64) holds.

    Raises:
        error: It is not the base64 of 32 bytes; the message names ``source`` and the fix.
    """
    try:
        key = base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError):
        key = b""
    if len(key) != KEY_BYTES:
        raise error(
            f"{source} is not the base64 of {KEY_BYTES} random bytes: make one with "
            "`openssl rand -base64 32`"
        )
    return key


def read_or_create_key(path: Path, error: type[Exception]) -> bytes:
    """The key in the file at ``path``, made first if there is none.

    Raises:
        error: The file holds something else than a key.
        OSError: The file can be neither read nor created.
    """
    try:
        return decode_key(path.read_text(encoding="ascii").strip(), str(path), error)
    except FileNotFoundError:
        pass
    fresh = new_key()
    if not create_private(path, fresh + "\n"):
        return decode_key(path.read_text(encoding="ascii").strip(), str(path), error)
    return base64.b64decode(fresh)
