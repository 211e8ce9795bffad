"""The one rule for a channel's name, shared by the wire models and every channel adapter.

A channel name travels inside URLs (the web channel's ``/channels/{channel}/stream``), channel
keys (``service:channel``) and log lines, so it is one path segment that needs no escaping:
ASCII letters, digits and ``_ - . : @ + ~``, 1 to 200 of them, not starting with a dot (so
never ``.`` or ``..``). A slash, a line break, a space or a percent sign is refused, rather
than quietly changed, so the name a client sends is the name it gets back.
"""

from __future__ import annotations

import re
from typing import Annotated

from pydantic import AfterValidator, WithJsonSchema

MAX_CHANNEL_CHARS = 200
"""Longest channel name."""


def channel_name_pattern(max_chars: int = MAX_CHANNEL_CHARS) -> str:
    """The rule as a regular expression, for names of at most ``max_chars`` characters.

    The same in Python and JSON Schema (ECMA-262). A channel adapter that prefixes the names
    its clients send (the web channel's tenants) publishes the shorter limit it leaves them.
    """
    return rf"^[A-Za-z0-9_:@+~-][A-Za-z0-9_.:@+~-]{{0,{max_chars - 1}}}$"


CHANNEL_NAME_PATTERN = channel_name_pattern()
"""The rule as a regular expression."""

_CHANNEL_NAME = re.compile(CHANNEL_NAME_PATTERN)


class InvalidChannelNameError(ValueError):
    """A channel name that breaks the rule; the message says what to change."""


def check_channel_name(value: str) -> str:
    """``value`` if it is a valid channel name.

    Raises:
        InvalidChannelNameError: It is empty, too long, starts with a dot or holds a character
            outside the rule.
    """
    if _CHANNEL_NAME.fullmatch(value):
        return value
    shown = repr(value[:40]) + ("..." if len(value) > 40 else "")
    if not value:
        problem = "is empty"
    elif len(value) > MAX_CHANNEL_CHARS:
        problem = f"is {len(value)} characters long (at most {MAX_CHANNEL_CHARS})"
    elif value.startswith("."):
        problem = "starts with a dot"
    else:
        bad = next(ch for ch in value if not _CHANNEL_NAME.fullmatch("a" + ch))
        problem = f"holds {bad!r}"
    raise InvalidChannelNameError(
        f"channel name {shown} {problem}: use 1-{MAX_CHANNEL_CHARS} ASCII letters, digits and "
        "_ - . : @ + ~, not starting with a dot"
    )


def channel_name_schema(max_chars: int = MAX_CHANNEL_CHARS) -> WithJsonSchema:
    """The published JSON Schema of a channel name of at most ``max_chars`` characters."""
    return WithJsonSchema(
        {
            "type": "string",
            "minLength": 1,
            "maxLength": max_chars,
            "pattern": channel_name_pattern(max_chars),
            "description": f"1-{max_chars} ASCII letters, digits and _ - . : @ + ~, "
            "not starting with a dot.",
        }
    )


ChannelName = Annotated[str, AfterValidator(check_channel_name), channel_name_schema()]
"""A channel's name, checked by :func:`check_channel_name`."""
