"""Sensitive-data detector: card numbers (Luhn-checked), API keys, private keys, e-mail, phone.

Run over the agent's replies: a reply that would carry a secret is what a blocking rule holds
back. Card numbers must pass the Luhn check, so order numbers and timestamps of the same
length do not count; API keys are the shapes the major providers issue (and a generic
long ``key=``/``token:`` assignment).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from schemas.guardrails import SensitiveKind

_CARD = re.compile(r"(?<![\d-])(?:\d[ -]?){12,18}\d(?![\d-])")
_API_KEY = re.compile(
    r"\b(sk-(?:ant-|proj-)?[A-Za-z0-9_-]{20,}|AKIA[0-9A-Z]{16}|gh[pousr]_[A-Za-z0-9]{36,}|"
    r"xox[abpr]-[A-Za-z0-9-]{10,}|AIza[0-9A-Za-z_-]{35}|"
    r"(?:api[_-]?key|secret|token)\s*[:=]\s*['\"]?[A-Za-z0-9_\-]{24,})",
    re.IGNORECASE,
)
_PRIVATE_KEY = re.compile(r"-----BEGIN (?:[A-Z]+ )?PRIVATE KEY-----")
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


def _cards(text: str) -> bool:
    for match in _CARD.finditer(text):
        digits = re.sub(r"\D", "", match.group(0))
        if 13 <= len(digits) <= 19 and luhn_valid(digits):
            return True
    return False


def _phones(text: str) -> bool:
    # Ten to fifteen digits in a phone-like run; shorter runs are times, prices and IDs.
    return any(10 <= len(re.sub(r"\D", "", m.group(0))) <= 15 for m in _PHONE.finditer(text))


def detect_sensitive(text: str, kinds: Iterable[SensitiveKind]) -> list[SensitiveKind]:
    """The kinds of sensitive data among ``kinds`` that ``text`` carries."""
    found: list[SensitiveKind] = []
    for kind in kinds:
        if kind == "card_number":
            hit = _cards(text)
        elif kind == "api_key":
            hit = _API_KEY.search(text) is not None
        elif kind == "private_key":
            hit = _PRIVATE_KEY.search(text) is not None
        elif kind == "email":
            hit = _EMAIL.search(text) is not None
        else:
            hit = _phones(text)
        if hit:
            found.append(kind)
    return found
