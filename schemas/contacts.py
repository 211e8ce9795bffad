"""The contact directory as the operator sees it, and the checks on what the operator types.

Names, addresses and group labels arrive from a terminal, so each is checked once here: a
mistake gets one line that says what to fix, and nothing is written.
"""

from __future__ import annotations

import re
import unicodedata

from pydantic import AwareDatetime, BaseModel, ConfigDict

from schemas.events import ChannelRef, Wire
from schemas.ids import Ulid
from schemas.text import InvalidTextError, clean_text

MAX_NAME_CHARS = 200
"""Longest display name (a channel's own speaker names have the same cap)."""

MAX_ADDRESS_CHARS = 320
"""Longest address (an email address's maximum length)."""

_KIND = re.compile(r"^[a-z][a-z0-9_-]{0,31}$")
_GROUP = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")


class ContactError(ValueError):
    """An operator's request the directory refuses; the message says what to fix."""


def clean_name(value: str, *, what: str = "name", max_chars: int = MAX_NAME_CHARS) -> str:
    """A one-line name: no control, bidirectional or other invisible formatting characters.

    A right-to-left override would make a name read differently from what it is, so the
    format characters (Unicode category Cf) are refused along with line breaks.

    Raises:
        InvalidTextError: The name is empty, too long, multi-line or holds such a character.
    """
    text = clean_text(value, what=what, max_chars=max_chars)
    for ch in text:
        if ch in "\n\t":
            raise InvalidTextError(f"{what} must be one line: remove the line break or tab")
        if unicodedata.category(ch) == "Cf":
            raise InvalidTextError(
                f"{what} contains the invisible formatting character U+{ord(ch):04X}: remove it"
            )
    return text


def channel_key(value: str) -> ChannelRef:
    """Parse ``service:channel``.

    Raises:
        ContactError: It is not a channel key.
    """
    service, sep, name = value.partition(":")
    try:
        if not sep:
            raise ValueError(value)
        return ChannelRef(service=service, channel=clean_name(name, what="channel"))
    except ValueError:
        raise ContactError(
            f"{value[:80]!r} is not a channel: write it as service:channel (e.g. terminal:tty)"
        ) from None


def address_kind(value: str) -> str:
    """An address's type label, such as ``email`` or ``phone``.

    Raises:
        ContactError: It is not a short lowercase label.
    """
    if not _KIND.fullmatch(value):
        raise ContactError(
            f"{value[:40]!r} is not an address type: use a short lowercase label like email"
        )
    return value


def group_label(value: str) -> str:
    """A channel group's label.

    Raises:
        ContactError: It is not 1 to 64 letters, digits, '.', '_' or '-'.
    """
    if not _GROUP.fullmatch(value):
        raise ContactError(
            f"{value[:40]!r} is not a group name: use up to 64 letters, digits, '.', '_' or '-'"
        )
    return value


class ContactIdentity(BaseModel):
    """One lookup key a channel resolves a sender by."""

    model_config = ConfigDict(extra="forbid")

    service: str
    channel: str
    speaker_id: str
    since: AwareDatetime


class ContactAddress(BaseModel):
    """An address the operator recorded, with its type label."""

    model_config = ConfigDict(extra="forbid")

    kind: str
    address: str


class ContactRecord(BaseModel):
    """A person in the agent's contact directory."""

    model_config = ConfigDict(extra="forbid")

    person_id: str
    name: str
    first_met: AwareDatetime
    last_interaction: AwareDatetime
    preferred_channel: str | None
    identities: list[ContactIdentity]
    addresses: list[ContactAddress]


class ChannelRecord(BaseModel):
    """A channel the agent talks on and the memory group it shares memory with."""

    model_config = ConfigDict(extra="forbid")

    key: str
    memory_group: str | None
    last_active: AwareDatetime


class PersonFolded(Wire):
    """Signal to an open conversation: the operator folded ``folded`` into ``survivor``.

    The conversation names the survivor among its participants from then on, so memory fences
    (which check who is present) see one person, as the store already does.
    """

    folded: Ulid
    survivor: Ulid
