"""Cutting degenerate repetition out of a small model's reply, streamed or whole.

A small model at chat temperature can fall into a loop: "I'm glad to have you on the team."
again and again until its token limit. Sampling penalties make that rare; this makes it
invisible. A reply is cut just before the first sentence that repeats an earlier one (compared
case- and punctuation-blind), in the reply or among sentences said before (``seen``: the
agent's earlier replies), and the stream never shows that sentence: text that might turn out to
be a repeat (a sentence so far identical to the start of an earlier one) is held back until it
either differs or repeats.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field

_SENTENCE_END = re.compile(r"(?<=[.!?…])[\"')\]]*\s+|\n+")
_NOT_WORD = re.compile(r"[^\w\s]+")
MIN_CHARS = 8
"""Shorter sentences ("Yes.", "Ha ha!") may repeat without being a loop."""


def _normal(sentence: str) -> str:
    return " ".join(_NOT_WORD.sub(" ", sentence.lower()).split())


def _sentences(text: str) -> list[tuple[int, str]]:
    """Each sentence's start offset and text; the last may be unfinished."""
    out: list[tuple[int, str]] = []
    start = 0
    for end in _SENTENCE_END.finditer(text):
        if text[start : end.start()].strip():
            out.append((start, text[start : end.start()]))
        start = end.end()
    if text[start:].strip():
        out.append((start, text[start:]))
    return out


def sentence_keys(texts: Iterable[str]) -> set[str]:
    """The sentences of ``texts`` as compared for repetition."""
    keys = {_normal(sentence) for text in texts for _, sentence in _sentences(text)}
    return {key for key in keys if len(key) >= MIN_CHARS}


def repeated_sentence(text: str) -> str | None:
    """The first sentence of ``text`` that repeats an earlier one, if any."""
    cut = _cut_at(text)
    if cut is None:
        return None
    return _sentences(text[cut:])[0][1].strip()


def _cut_at(text: str, said: Iterable[str] = ()) -> int | None:
    seen = set(said)
    for start, sentence in _sentences(text):
        key = _normal(sentence)
        if len(key) >= MIN_CHARS and key in seen:
            return start
        seen.add(key)
    return None


def cut_repetition(text: str, said: Iterable[str] = ()) -> str:
    """``text`` up to (not including) the first sentence that repeats an earlier one.

    Args:
        text: The reply.
        said: Sentence keys said before (:func:`sentence_keys`) that count as earlier ones.
    """
    cut = _cut_at(text, said)
    return text if cut is None else text[:cut].rstrip()


@dataclass
class RepetitionGuard:
    """Forwards a streamed reply piece by piece, never showing a repeated sentence."""

    seen: set[str] = field(default_factory=set)
    text: str = ""
    shown: int = 0
    stopped: bool = False

    def feed(self, piece: str) -> str:
        """Take the next piece; returns the text that may be shown now (possibly empty)."""
        if self.stopped:
            return ""
        self.text += piece
        safe = self._safe_length()
        out = self.text[self.shown : safe]
        self.shown = max(self.shown, safe)
        return out

    def finish(self) -> str:
        """The stream ended: returns the rest that may be shown."""
        final = self.cut()
        out = final[self.shown :] if len(final) > self.shown else ""
        self.shown = max(self.shown, len(final))
        return out

    def cut(self) -> str:
        """The reply as it should be kept."""
        return cut_repetition(self.text, self.seen)

    def _safe_length(self) -> int:
        cut = _cut_at(self.text, self.seen)
        if cut is not None:
            self.stopped = True
            return len(self.text[:cut].rstrip())
        sentences = _sentences(self.text)
        if not sentences:
            return len(self.text)
        start, last = sentences[-1]
        partial = _normal(last)
        earlier = {_normal(s) for _, s in sentences[:-1]} | self.seen
        if partial and any(e.startswith(partial) for e in earlier):
            return start  # might become a repeat: hold it back
        return len(self.text)


def finished_length(text: str) -> int:
    """How much of ``text`` is finished sentences (with the space after): 0 if none is."""
    ends = list(_SENTENCE_END.finditer(text))
    return ends[-1].end() if ends else 0


def last_full_sentence(text: str) -> str:
    """``text`` up to its last finished sentence (all of it if none has finished)."""
    ends = list(_SENTENCE_END.finditer(text.rstrip() + " "))
    if not ends:
        return text
    kept = text[: ends[-1].start()].rstrip()
    return kept or text
