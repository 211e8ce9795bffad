"""Prompt-injection detector: does a text try to instruct the model that reads it?

Anyone may call it on text from outside (inbound messages, tool results, imported dialog,
fetched pages). It is a cheap lexical screen, not a classifier: each signal is one family of
attempt (override earlier instructions, impersonate a system or another role, escape the
fence of :mod:`activities.context.fencing`, smuggle a new system prompt), and the result names
the families found, so a rule can ask for one or several. The text is read as
:func:`~activities.context.normalise.normalise` gives it, so fullwidth letters, homoglyphs
from other scripts and invisible characters hide nothing. The fence stays the defence; the
detector tells an operator someone is trying.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from activities.context.normalise import normalise
from schemas.fences import TAG

_FLAGS = re.IGNORECASE | re.MULTILINE

_SIGNALS: tuple[tuple[str, re.Pattern[str]], ...] = (
    (
        "override",
        re.compile(
            r"\b(ignore|disregard|forget|override|bypass)\b[^.\n]{0,40}?"
            r"\b(all\s+|any\s+|the\s+|your\s+|previous\s+|prior\s+|above\s+|earlier\s+)*"
            r"(instructions?|prompts?|rules|guidelines|directives|system\s+prompt|constraints)\b",
            _FLAGS,
        ),
    ),
    (
        "role_impersonation",
        re.compile(
            r"(^\s*(system|assistant|developer|operator)\s*:|"
            r"<\|?\s*(system|im_start|im_end)\s*\|?>|\[\s*(system|inst)\s*\]|"
            r"###\s*(system|instruction)s?\b)",
            _FLAGS,
        ),
    ),
    (
        "new_instructions",
        re.compile(
            r"\b(you\s+are\s+now|from\s+now\s+on\s+you|act\s+as\s+(an?\s+)?unrestricted|"
            r"new\s+(system\s+)?instructions?\s*:|developer\s+mode|jailbreak|\bDAN\b)",
            _FLAGS,
        ),
    ),
    (
        "fence_escape",
        re.compile(
            rf"<\s*/?\s*{TAG}\b|\[\s*/\s*{TAG}\b|trust\s*=\s*[\"']?(operator|system)", _FLAGS
        ),
    ),
    (
        "exfiltration",
        re.compile(
            r"\b(reveal|print|repeat|show|output)\b[^.\n]{0,30}"
            r"\b(system\s+prompt|hidden\s+instructions?|your\s+instructions|api\s+keys?)\b",
            _FLAGS,
        ),
    ),
)

SIGNALS: tuple[str, ...] = tuple(name for name, _ in _SIGNALS)
"""Every signal the detector can name."""


@dataclass(frozen=True)
class InjectionFinding:
    """The signals found in one text, each with the words that matched (shortened)."""

    signals: tuple[str, ...]
    excerpts: tuple[str, ...]

    def __bool__(self) -> bool:
        return bool(self.signals)


@lru_cache(maxsize=1024)  # several rules read the same input and tool results
def detect_injection(text: str) -> InjectionFinding:
    """The injection signals in ``text`` (empty and falsy when there are none).

    Excerpts quote the normalised text.
    """
    text = normalise(text)
    names: list[str] = []
    excerpts: list[str] = []
    for name, pattern in _SIGNALS:
        match = pattern.search(text)
        if match is not None:
            names.append(name)
            excerpts.append(match.group(0).strip()[:80])
    return InjectionFinding(signals=tuple(names), excerpts=tuple(excerpts))


def looks_like_injection(text: str, *, min_signals: int = 1) -> bool:
    """Whether ``text`` carries at least ``min_signals`` distinct injection signals."""
    return len(detect_injection(text).signals) >= min_signals
