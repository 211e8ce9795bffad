"""The deployment's internal key: what proves a message to an internal handler came from Persyn.

Only Persyn's own processes (workers, the CLI, the web channel, team-chat processes) hold it; a
namespace client does not. It is ``PERSYN_INTERNAL_KEY`` (base64 of 32 bytes) when set, which
is how several hosts share one key; otherwise the file ``PERSYN_INTERNAL_KEY_FILE`` (by default
``$PERSYN_HOME/keys/internal.key``), created on first use (mode 0600 in a 0700 directory, never
through a link), which replicas on one volume share.

The key must stay the same while any run it signed messages for is open: a worker replaying
such a run checks the recorded signatures again, and a different key would drop them.
"""

from __future__ import annotations

from pathlib import Path

from schemas.settings import Settings
from temporal.key_files import decode_key, read_or_create_key

INTERNAL_KEY_FILE = Path("keys") / "internal.key"
"""Where the key lives under the home when ``PERSYN_INTERNAL_KEY`` is not set."""


class InternalKeyError(RuntimeError):
    """The internal key is malformed or cannot be read or created; the message says what to fix."""


def internal_key(settings: Settings) -> bytes:
    """The deployment's internal key, from ``PERSYN_INTERNAL_KEY`` or the key file.

    Raises:
        InternalKeyError: The configured value or the file is not the base64 of 32 bytes, or
            the file can be neither read nor created.
    """
    if settings.internal_key is not None:
        value = settings.internal_key.get_secret_value()
        return decode_key(value, "PERSYN_INTERNAL_KEY", InternalKeyError)
    path = settings.internal_key_file or settings.home / INTERNAL_KEY_FILE
    try:
        return read_or_create_key(path, InternalKeyError)
    except OSError as err:
        raise InternalKeyError(
            f"cannot read or create the internal key {path} ({err.strerror or err}): fix its "
            "permissions, or set PERSYN_INTERNAL_KEY or PERSYN_INTERNAL_KEY_FILE"
        ) from None
