"""Validation of free text arriving from outside: messages, personas, imported dialog.

Text crosses three hostile boundaries (a terminal, a JSON payload, a file), so one function
decides what is acceptable everywhere: non-empty after trimming, within a size cap, no NUL
(PostgreSQL cannot store it), no lone surrogates (invalid UTF-8 in disguise), and no control
characters other than tab and newline.
"""

from __future__ import annotations

import unicodedata
from typing import Annotated

from pydantic import AfterValidator, WithJsonSchema

MAX_MESSAGE_CHARS = 32_000
"""Largest inbound message accepted (about 8k tokens): bigger inputs belong in a file tool."""

MAX_PERSONA_CHARS = 16_000
"""Largest seed persona accepted."""

_ALLOWED_CONTROLS = {"\n", "\t", "\r"}


class InvalidTextError(ValueError):
    """Text that cannot be accepted, with a message that says what to fix."""


def clean_text(value: str, *, what: str = "message", max_chars: int = MAX_MESSAGE_CHARS) -> str:
    r"""Validate and normalise free text.

    Normalises to NFC and ``\\n`` line endings and trims surrounding whitespace.

    Args:
        value: The text.
        what: What the text is, for the error message.
        max_chars: Upper bound on the length after normalisation.

    Raises:
        InvalidTextError: The text is empty, too long or contains forbidden characters.
    """
    if not isinstance(value, str):
        raise InvalidTextError(f"{what} must be text")
    if "\x00" in value:
        raise InvalidTextError(f"{what} contains a NUL character: remove it and send again")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise InvalidTextError(
            f"{what} is not valid UTF-8 (it holds a lone surrogate): re-encode it as UTF-8"
        ) from None
    text = unicodedata.normalize("NFC", value.replace("\r\n", "\n").replace("\r", "\n")).strip()
    if not text:
        raise InvalidTextError(f"{what} is empty: type something to say")
    if len(text) > max_chars:
        raise InvalidTextError(
            f"{what} is {len(text):,} characters; the limit is {max_chars:,}: shorten it"
        )
    for ch in text:
        if unicodedata.category(ch) == "Cc" and ch not in _ALLOWED_CONTROLS:
            raise InvalidTextError(
                f"{what} contains the control character U+{ord(ch):04X}: remove it"
            )
    return text


def _message(value: str) -> str:
    return clean_text(value)


def _persona(value: str) -> str:
    return clean_text(value, what="persona", max_chars=MAX_PERSONA_CHARS)


NO_CONTROL_CHARACTERS = "^[^\\u0000-\\u0008\\u000B\\u000C\\u000E-\\u001F\\u007F-\\u009F]*$"
"""JSON Schema pattern (ECMA-262) refusing the control characters :func:`clean_text` refuses."""


def text_json_schema(*, what: str, max_chars: int) -> WithJsonSchema:
    """The published JSON Schema of text validated by :func:`clean_text`, with every rule in it."""
    return WithJsonSchema(
        {
            "type": "string",
            "minLength": 1,
            "maxLength": max_chars,
            "pattern": NO_CONTROL_CHARACTERS,
            "description": f"The {what}: 1-{max_chars:,} characters after trimming surrounding "
            "whitespace; valid UTF-8; no NUL or other control characters except tab, line feed "
            "and carriage return.",
        }
    )


MessageText = Annotated[
    str,
    AfterValidator(_message),
    text_json_schema(what="message", max_chars=MAX_MESSAGE_CHARS),
]
"""An inbound message's text, validated by :func:`clean_text`."""

PersonaText = Annotated[
    str,
    AfterValidator(_persona),
    text_json_schema(what="persona", max_chars=MAX_PERSONA_CHARS),
]
"""A seed persona, validated by :func:`clean_text`."""


def estimate_tokens(text: str) -> int:
    """Cheap token estimate (about four characters a token) for budget guards."""
    return (len(text) + 3) // 4
