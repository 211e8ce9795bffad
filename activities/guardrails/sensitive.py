"""Sensitive-data detector: card numbers (Luhn-checked), API keys, private keys, e-mail, phone.

Run over the agent's replies: a reply that would carry a secret is what a blocking rule holds
back. Card numbers must pass the Luhn check, so order numbers and timestamps of the same
length do not count; API keys are the shapes the major providers issue (and a generic
long ``key=``/``token:`` assignment). Text is read as :func:`normalise` gives it, so
zero-width characters, no-break spaces and fullwidth digits hide nothing; groups of a card
number may be separated by a space, a hyphen or a dot.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from activities.context.normalise import normalise
from schemas.guardrails import SensitiveKind

_CARD = re.compile(r"(?<![\d.-])(?:\d[ .-]?){12,18}\d(?![.-]?\d)")
_API_KEY = re.compile(
    r"\b(sk-(?:ant-|proj-)?[A-Za-z0-9_-]{20,}|AKIA[0-9A-Z]{16}|gh[pousr]_[A-Za-z0-9]{36,}|"
    r"xox[abpr]-[A-Za-z0-9-]{10,}|AIza[0-9A-Za-z_-]{35}|"
    r"(?:api[_-]?key|secret|token)\s*[:=]\s*['\"]?[A-Za-z0-9_\-]{24,})",
    re.IGNORECASE,
)
_PRIVATE_KEY = re.compile(r"-----BEGIN (?:[A-Z]+ )?PRIVATE KEY-----", re.IGNORECASE)
_EMAIL = re.compile(r"\b[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}\b")
_PHONE = re.compile(r"(?<!\w)\+?\d[\d ().-]{7,}\d(?!\w)")


def luhn_valid(digits: str) -> bool:
    """Whether a string of digits passes the Luhn checksum card numbers carry."""
    total = 0
    for position, char in enumerate(reversed(digits)):
        value = int(char)
        if position % 2 == 1:
            value *= 2
            if value > 9:
                value -= 9
        total += value
    return total % 10 == 0


@dataclass(frozen=True)
class Found:
    """One piece of sensitive data: its kind and where it lies in the normalised text."""

    kind: SensitiveKind
    start: int
    end: int


def _cards(text: str) -> Iterable[tuple[int, int]]:
    for match in _CARD.finditer(text):
        digits = re.sub(r"\D", "", match.group(0))
        if 13 <= len(digits) <= 19 and luhn_valid(digits):
            yield match.span()


def _phones(text: str) -> Iterable[tuple[int, int]]:
    # Ten to fifteen digits in a phone-like run; shorter runs are times, prices and IDs.
    for match in _PHONE.finditer(text):
        if 10 <= len(re.sub(r"\D", "", match.group(0))) <= 15:
            yield match.span()


def _spans(kind: SensitiveKind, text: str) -> Iterable[tuple[int, int]]:
    if kind == "card_number":
        return _cards(text)
    if kind == "phone":
        return _phones(text)
    pattern = {"api_key": _API_KEY, "private_key": _PRIVATE_KEY, "email": _EMAIL}[kind]
    return (match.span() for match in pattern.finditer(text))


def find_sensitive(normalised: str, kinds: Iterable[SensitiveKind]) -> list[Found]:
    """Every piece of sensitive data of ``kinds`` in ``normalised`` (already normalised)."""
    return [Found(kind, start, end) for kind in kinds for start, end in _spans(kind, normalised)]


def detect_sensitive(text: str, kinds: Iterable[SensitiveKind]) -> list[SensitiveKind]:
    """The kinds of sensitive data among ``kinds`` that ``text`` carries."""
    found = {f.kind for f in find_sensitive(normalise(text), kinds)}
    return [kind for kind in dict.fromkeys(kinds) if kind in found]
