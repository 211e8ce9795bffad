"""Identifiers: ULIDs for everything time-ordered, validated handles for agents.

Every event, conversation, activation, dialog turn and record carries a ULID: sorting by ID
sorts by creation time, and the ID doubles as the lookup key into raw history. Workflow code
must not call :func:`new_ulid` (it reads the clock and the OS random source); it builds IDs with
:func:`ulid_from_parts` from ``workflow.now()`` and ``workflow.random()`` instead.
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import Annotated

from pydantic import AfterValidator, StringConstraints, WithJsonSchema
from ulid import ULID

ULID_PATTERN = r"^[0-7][0-9A-HJKMNP-TV-Z]{25}$"
"""A canonical ULID: 26 upper-case Crockford base32 characters."""

HANDLE_PATTERN = r"^[a-z][a-z0-9-]{0,30}[a-z0-9]$"
"""An agent handle."""

_ULID_RE = re.compile(ULID_PATTERN)
_HANDLE_RE = re.compile(HANDLE_PATTERN)


class InvalidIdError(ValueError):
    """An identifier that is not of the required form."""


def new_ulid() -> str:
    """A fresh ULID string (not for workflow code: it reads the clock and randomness)."""
    return str(ULID())


def ulid_from_parts(when: datetime, randomness: int) -> str:
    """A ULID from a timestamp and 80 bits of randomness; deterministic, so workflow-safe.

    Args:
        when: The creation time (``workflow.now()`` inside a workflow).
        randomness: Any integer; its low 80 bits fill the random part
            (``workflow.random().getrandbits(80)`` inside a workflow).
    """
    millis = int(when.timestamp() * 1000)
    raw = millis.to_bytes(6, "big") + (randomness & ((1 << 80) - 1)).to_bytes(10, "big")
    return str(ULID.from_bytes(raw))


def is_ulid(value: str) -> bool:
    """Whether ``value`` is a canonical (upper-case Crockford base32) ULID string."""
    return bool(_ULID_RE.match(value))


def check_ulid(value: str, *, what: str = "id") -> str:
    """Return ``value`` normalised to upper case if it is a ULID, else raise a one-line error.

    Args:
        value: The candidate identifier.
        what: What the identifier names, for the error message ("conversation id", ...).

    Raises:
        InvalidIdError: ``value`` is not a ULID.
    """
    candidate = value.strip().upper() if isinstance(value, str) else value
    if not isinstance(candidate, str) or not _ULID_RE.match(candidate):
        shown = value if isinstance(value, str) and len(value) <= 40 else f"{str(value)[:37]}..."
        raise InvalidIdError(
            f"{what} {shown!r} is not a ULID: use the 26-character ID Persyn printed "
            "(Crockford base32, e.g. 01JD3M6Z8Q4N1V5X7B2C9E0F1G)"
        )
    return candidate


def ulid_time(value: str) -> datetime:
    """The creation time encoded in a ULID."""
    return ULID.from_str(value).datetime


def check_handle(value: str) -> str:
    """Return ``value`` if it is a valid agent handle, else raise a one-line error."""
    if not isinstance(value, str) or not _HANDLE_RE.match(value):
        raise InvalidIdError(
            f"agent handle {value!r} is invalid: use 2-32 lower-case letters, digits or '-', "
            "starting with a letter (e.g. 'ada')"
        )
    return value


def _ulid(value: str) -> str:
    return check_ulid(value)


def _conversation_ulid(value: str) -> str:
    return check_ulid(value, what="conversation id")


# The JSON Schemas published for integrators carry the same patterns the validators enforce.
_ULID_SCHEMA = WithJsonSchema({"type": "string", "pattern": ULID_PATTERN, "format": "ulid"})

Ulid = Annotated[str, AfterValidator(_ulid), _ULID_SCHEMA]
"""A ULID-valued field; rejects anything else with a clear message."""

ConversationId = Annotated[str, AfterValidator(_conversation_ulid), _ULID_SCHEMA]
"""A conversation ULID; arbitrary strings are rejected (spec §4.1)."""

AgentHandle = Annotated[
    str,
    StringConstraints(min_length=2, max_length=32),
    AfterValidator(check_handle),
    WithJsonSchema({"type": "string", "pattern": HANDLE_PATTERN}),
]
"""An agent's handle: the human-chosen key of ``agent/{handle}``."""
