"""Formation output that is not a recollection, refused before it is stored.

Two failures of small models, seen on SmolLM2 (issue 29), that no schema catches:

- **the prompt echoed back**: "We are ready to form a long-term memory. Here is the
  conversation ..." stored as a memory. A summary that repeats a run of
  :data:`ECHO_WORDS` words of the instructions it was given copies the prompt.
- **the person's facts taken as the agent's own**: the person said "I am allergic to peanuts"
  and the memory reads "I remember that I was allergic to peanuts". A first-person sentence of
  the summary whose subject words all come from what a person said about themselves (and
  nothing the agent said), without naming or pointing at the person, swaps perspective.

Refused output is treated like output that does not fit its schema: tried once more, then the
range is left for a later consolidation with its dialog untouched (``docs/memory.md``), so a
wrong memory is never stored.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from activities.deliberation.recollection import content_words
from activities.prompts import load
from store.queries.memory_formation import RangeTurn

ECHO_WORDS = 8
"""A run of this many words of the instructions in a summary is a copy, not a recollection."""

_WORDS = re.compile(r"[\w']+")
_SENTENCE = re.compile(r"(?<=[.!?])\s+|\n+")
_FIRST_PERSON = re.compile(r"\b(?:I|I'm|I've|I'd|I'll|me|my|mine|myself)\b")
_POINTING = re.compile(
    r"\b(?:you|your|yours|he|she|they|him|her|them|his|hers|their|someone|somebody|"
    r"person|people|friend|they're|he's|she's|told\s+me|said|mentioned|asked)\b",
    re.IGNORECASE,
)


def _runs(text: str, size: int) -> set[tuple[str, ...]]:
    words = [w.lower() for w in _WORDS.findall(text)]
    return {tuple(words[i : i + size]) for i in range(len(words) - size + 1)}


def copies_prompt(summary: str, instructions: Iterable[str]) -> str | None:
    """The run of the instructions ``summary`` repeats, or ``None``."""
    told: set[tuple[str, ...]] = set()
    for text in instructions:
        told |= _runs(text, ECHO_WORDS)
    for run in _runs(summary, ECHO_WORDS):
        if run in told:
            return " ".join(run)
    return None


def takes_their_facts(summary: str, turns: Sequence[RangeTurn]) -> str | None:
    """The first sentence of ``summary`` that tells a person's own facts as the agent's."""
    theirs: list[set[str]] = []
    names: set[str] = set()
    said_by_me: set[str] = set()
    for turn in turns:
        if turn.role == "person":
            names |= {n.lower() for n in _WORDS.findall(turn.speaker_name)}
            for sentence in _SENTENCE.split(turn.text):
                if _FIRST_PERSON.search(sentence):
                    theirs.append(content_words(sentence))
        else:
            said_by_me |= content_words(turn.text)
    for sentence in _SENTENCE.split(summary.strip()):
        if not _FIRST_PERSON.search(sentence) or _POINTING.search(sentence):
            continue
        words = content_words(sentence) - said_by_me
        if {w.lower() for w in _WORDS.findall(sentence)} & names:
            continue
        if len(words) >= 2 and any(words <= facts for facts in theirs):
            return sentence
    return None


INSTRUCTIONS = ("memory/summary.md", "memory/recollection.md", "memory/earlier.md")
"""The formation prompt's own words (its templates, not the dialog they quote)."""


def refusal(summary: str, turns: Sequence[RangeTurn]) -> str | None:
    """Why ``summary`` of ``turns`` is not stored, or ``None`` when it may be."""
    copied = copies_prompt(summary, (load(name) for name in INSTRUCTIONS))
    if copied is not None:
        return f"copies its instructions ({copied!r}): not a recollection"
    swapped = takes_their_facts(summary, turns)
    if swapped is not None:
        return f"tells what a person said of themselves as my own ({swapped[:120]!r})"
    return None
