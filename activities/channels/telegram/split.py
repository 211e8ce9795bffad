"""Cutting a long message into parts Telegram accepts (4,096 characters each).

Telegram counts a message's length in UTF-16 code units, so a character outside the Basic
Multilingual Plane (most emoji) counts twice. Parts end at a paragraph, a line or a space when
one is near enough, so a long reply still reads naturally.
"""

from __future__ import annotations

TELEGRAM_LIMIT = 4096
"""Longest text of one Telegram message, in UTF-16 code units."""


def utf16_length(text: str) -> int:
    """The length Telegram measures."""
    return len(text.encode("utf-16-le")) // 2


def _fit(text: str, limit: int) -> int:
    """The most leading characters of ``text`` whose UTF-16 length is within ``limit``."""
    units = 0
    for index, char in enumerate(text):
        units += 2 if ord(char) > 0xFFFF else 1
        if units > limit:
            return index
    return len(text)


def split_message(text: str, *, limit: int = TELEGRAM_LIMIT) -> list[str]:
    """``text`` as parts of at most ``limit`` UTF-16 code units, none of them empty."""
    parts: list[str] = []
    rest = text.strip()
    while utf16_length(rest) > limit:
        cut = _fit(rest, limit)
        window = rest[:cut]
        # A natural break in the second half of the part, else a hard cut.
        for separator in ("\n\n", "\n", " "):
            at = window.rfind(separator)
            if at >= max(cut // 2, 1):
                cut = at
                break
        head = rest[:cut].rstrip()
        parts.append(head)
        rest = rest[cut:].lstrip()
    if rest:
        parts.append(rest)
    return parts
