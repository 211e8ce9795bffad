"""Validation of text arriving from outside: messages, personas, names, every wire string.

Text crosses three hostile boundaries (a terminal, a JSON payload, a file). Three rules, each
decided once here:

* every string on the wire (:func:`unstorable`, applied by ``schemas.events.Wire`` to every
  field, key and nested value): no NUL (PostgreSQL refuses it in text and JSON) and no lone
  surrogate (it has no UTF-8 form, so neither PostgreSQL nor a JSON encoder can hold it);
* free text (:func:`clean_text`): also non-empty after trimming, within a size cap, and no
  control characters other than tab and newline;
* names and identifiers (:data:`Name`): also no control characters at all and no bidirectional
  controls, which would make one name display as another.
"""

from __future__ import annotations

import re
import unicodedata
from typing import Annotated

from pydantic import AfterValidator, WithJsonSchema

MAX_MESSAGE_CHARS = 32_000
"""Largest inbound message accepted (about 8k tokens): bigger inputs belong in a file tool."""

MAX_PERSONA_CHARS = 16_000
"""Largest seed persona accepted."""

_ALLOWED_CONTROLS = {"\n", "\t", "\r"}

BIDI_CONTROLS = frozenset(
    "\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
)
"""Bidirectional formatting characters: harmless in prose, a spoofing tool in a name."""

MAX_NAME_CHARS = 200
"""Longest name or identifier (a speaker, a channel, an agent's display name)."""


_UNSTORABLE = re.compile("[\x00\ud800-\udfff]")
"""NUL, or a lone surrogate: what :func:`unstorable` refuses."""


class InvalidTextError(ValueError):
    """Text that cannot be accepted, with a message that says what to fix."""


def unstorable(value: str) -> str | None:
    """Why ``value`` cannot be stored or sent on (``None`` when it can).

    PostgreSQL refuses NUL in ``text`` and ``jsonb``; a lone surrogate (U+D800-U+DFFF) has no
    UTF-8 form, so no database, log or JSON encoder downstream can hold it. Either would pass a
    ``str`` check at the door and fail every attempt of the step that stores it.
    """
    # One scan in C: every wire string passes here, most of them long and clean.
    found = _UNSTORABLE.search(value)
    if found is None:
        return None
    if "\x00" in value:
        return "contains a NUL character (U+0000), which cannot be stored: remove it"
    return (
        f"is not valid UTF-8 (it holds the lone surrogate U+{ord(found.group()):04X}): "
        "re-encode it as UTF-8"
    )


def clean_name(value: str, *, what: str = "name") -> str:
    """Validate a name or identifier: printable, no bidirectional controls, trimmed.

    Raises:
        InvalidTextError: The name is empty, too long or holds a character it cannot.
    """
    problem = unstorable(value)
    if problem is not None:
        raise InvalidTextError(f"{what} {problem}")
    text = value.strip()
    if not text:
        raise InvalidTextError(f"{what} is empty: give at least one visible character")
    if len(text) > MAX_NAME_CHARS:
        raise InvalidTextError(
            f"{what} is {len(text):,} characters; the limit is {MAX_NAME_CHARS}: shorten it"
        )
    for ch in text:
        if unicodedata.category(ch) == "Cc":
            raise InvalidTextError(
                f"{what} contains the control character U+{ord(ch):04X}: remove it"
            )
        if ch in BIDI_CONTROLS:
            raise InvalidTextError(
                f"{what} contains the bidirectional control U+{ord(ch):04X}, which can make "
                "one name look like another: remove it"
            )
    return text


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
    problem = unstorable(value)
    if problem is not None:
        raise InvalidTextError(f"{what} {problem}")
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

_TEXT_REFUSED = "\\u0000-\\u0008\\u000B\\u000C\\u000E-\\u001F\\u007F-\\u009F"

TEXT_PATTERN = f"^[^{_TEXT_REFUSED}]*[^\\s{_TEXT_REFUSED}][^{_TEXT_REFUSED}]*$"
"""JSON Schema pattern of text :func:`clean_text` accepts: those control characters refused, and
at least one character that is not whitespace (the text is trimmed, and may not be empty)."""


def text_json_schema(*, what: str, max_chars: int) -> WithJsonSchema:
    """The published JSON Schema of text validated by :func:`clean_text`, with every rule in it."""
    return WithJsonSchema(
        {
            "type": "string",
            "minLength": 1,
            "maxLength": max_chars,
            "pattern": TEXT_PATTERN,
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


_NAME_REFUSED = "\\u0000-\\u001F\\u007F-\\u009F\\u061C\\u200E\\u200F\\u202A-\\u202E\\u2066-\\u2069"

NAME_PATTERN = f"^[^{_NAME_REFUSED}]*[^\\s{_NAME_REFUSED}][^{_NAME_REFUSED}]*$"
"""JSON Schema pattern (ECMA-262) of a :data:`Name`: a visible character, no control characters
and no bidirectional controls."""


def _name(value: str) -> str:
    return clean_name(value)


Name = Annotated[
    str,
    AfterValidator(_name),
    WithJsonSchema(
        {
            "type": "string",
            "minLength": 1,
            "maxLength": MAX_NAME_CHARS,
            "pattern": NAME_PATTERN,
            "description": f"1-{MAX_NAME_CHARS} characters after trimming surrounding "
            "whitespace, at least one visible; valid UTF-8; no control characters and no "
            "bidirectional controls.",
        }
    ),
]
"""A name or identifier on the wire (speaker, channel, display name), checked by
:func:`clean_name`."""


def estimate_tokens(text: str) -> int:
    """Cheap token estimate (about four characters a token) for budget guards."""
    return (len(text) + 3) // 4


def storable(value: str) -> str:
    """``value`` with NUL and lone surrogates, which nothing downstream can store, as U+FFFD.

    For text a model produced: it must reach the person and the store rather than fail every
    attempt of the step that received it.
    """
    if unstorable(value) is None:
        return value
    return "".join("\ufffd" if ch == "\x00" or "\ud800" <= ch <= "\udfff" else ch for ch in value)


_WORD = re.compile(r"\w+")


def words_of(text: str) -> frozenset[str]:
    """The case-folded words of ``text``."""
    return frozenset(_WORD.findall(text.casefold()))


def word_similarity(a: str, b: str) -> float:
    """Jaccard similarity of two texts' words: 1.0 for the same words, 0.0 for none shared."""
    left, right = words_of(a), words_of(b)
    if not left or not right:
        return 0.0
    return len(left & right) / len(left | right)
