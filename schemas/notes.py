"""Notes: durable text an agent keeps about itself, a person or a channel, some pinned in context.

A note outlives every conversation. A *pinned* note stands in every prompt its scope reaches
(the agent's own notes always; a person's when they take part; a channel's on that channel);
an unpinned one waits to be read with the notes tools. Who wrote a note and from what is its
*source*, set by the platform from where the write came from, never by the text or by the
model's arguments. Only a trusted source may pin: a pinned note goes into the system prompt, so
words from an unverified speaker, a tool result or an imported file stay unpinned.

Quick facts (``remember_fact``) are something else: a key/value scratchpad of what was said,
overwritten by the same key, noted and not checked. A note is written once and replaced only
through a ``supersedes`` link, so its history stays readable.
"""

from __future__ import annotations

from enum import StrEnum

from pydantic import AwareDatetime, BaseModel, ConfigDict, Field

from schemas.text import InvalidTextError, clean_text, word_similarity, words_of


class NoteScope(StrEnum):
    """Whom a note is about: the agent itself, one person, or one channel."""

    AGENT = "agent"
    PERSON = "person"
    CHANNEL = "channel"


class NoteSource(StrEnum):
    """Where a note's words came from, as the platform saw it."""

    OPERATOR = "operator"
    """Typed by an operator (``persyn notes add``)."""
    AGENT = "agent"
    """Written by the agent in a turn from a verified speaker, or of its own, before it read any
    tool result."""
    SPEAKER = "speaker"
    """Written by the agent in a turn from a speaker nobody vouched for."""
    TOOL_RESULT = "tool_result"
    """Written by the agent after it read a tool result in the same turn."""
    IMPORTED = "imported"
    """Brought in from a file (``persyn notes import``)."""


TRUSTED_SOURCES = frozenset({NoteSource.OPERATOR, NoteSource.AGENT})
"""The sources that may pin: everything else may be someone else's words in disguise."""

UNTRUSTED_REASONS = {
    NoteSource.SPEAKER: "this turn is from a speaker your operator has not vouched for",
    NoteSource.TOOL_RESULT: "you read a tool result earlier in this turn, and the note may "
    "carry its words",
    NoteSource.IMPORTED: "its text was imported from a file",
}
"""Why a source may not pin, in words the writer reads."""


class NoteError(ValueError):
    """A note cannot be written, linked or removed as asked; the message says what to fix."""


class UntrustedPinError(NoteError):
    """A note from an untrusted source was to be pinned."""


MAX_NOTE_BYTES = 2000
"""The default cap on a note's text, in UTF-8 bytes (``PERSYN_NOTES__MAX_BYTES``)."""


def note_text(value: str, *, max_bytes: int = MAX_NOTE_BYTES) -> str:
    """``value`` validated as a note's text: trimmed, NFC, within ``max_bytes`` UTF-8 bytes.

    Raises:
        NoteError: It is empty, holds NUL or another control character, or is too long.
    """
    try:
        # Characters are bounded loosely here; the cap that holds is in bytes, just below.
        text = clean_text(value, what="the note", max_chars=4 * max_bytes)
    except InvalidTextError as err:
        raise NoteError(str(err)) from None
    size = len(text.encode())
    if size > max_bytes:
        raise NoteError(f"the note is {size:,} bytes; the limit is {max_bytes:,}: shorten it")
    return text


class Note(BaseModel):
    """One stored note."""

    model_config = ConfigDict(frozen=True)

    id: str
    agent: str
    scope: NoteScope
    scope_id: str = Field(description="'' for the agent; a person's ID; a channel's key.")
    text: str
    pinned: bool
    source: NoteSource
    written_by: str = Field(description="Who wrote it, in words: the operator, or the turn.")
    activation_id: str | None = None
    supersedes: str | None = None
    superseded_by: str | None = None
    created_at: AwareDatetime

    @property
    def live(self) -> bool:
        """Whether no later note replaces it."""
        return self.superseded_by is None


class SimilarNote(BaseModel):
    """A note that reads like one being written: a hint to supersede instead of adding."""

    id: str
    text: str
    score: float = Field(description="Jaccard similarity of the two notes' words, 0..1.")
    contained: bool = Field(
        default=False, description="Most of the new note's words are already in this one."
    )


class WrittenNote(BaseModel):
    """A note just written, with the live notes of its scope that read like it."""

    note: Note
    similar: list[SimilarNote] = Field(default_factory=list)


class NoteSettings(BaseModel):
    """Bounds of notes (``PERSYN_NOTES__*``)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    max_bytes: int = Field(
        default=MAX_NOTE_BYTES, ge=64, le=32_000, description="A note's text, in UTF-8 bytes."
    )
    max_per_scope: int = Field(
        default=200, ge=1, le=10_000, description="Live notes one scope may hold."
    )
    max_pinned_per_scope: int = Field(
        default=12, ge=0, le=200, description="Pinned live notes one scope may hold."
    )
    similar_threshold: float = Field(
        default=0.5, gt=0, le=1, description="Word overlap from which a note is listed as similar."
    )


def similarity(a: str, b: str) -> float:
    """Jaccard similarity of two notes' words (``schemas.text.word_similarity``).

    Lexical on purpose: the hint must not depend on whether an encoder is configured.
    """
    return word_similarity(a, b)


CONTAINED = 0.8
"""The share of a new note's words that, found in an older note, makes it a likely repeat."""


def contained(new: str, old: str) -> bool:
    """Whether most of ``new``'s words (at least three of them) are already in ``old``.

    Jaccard alone misses a short note that restates part of a longer one ("Max is allergic to
    peanuts." beside "Max is allergic to peanuts; never suggest a recipe with them." scores
    0.45), which is the repeat the hint exists to catch.
    """
    words = words_of(new)
    return len(words) >= 3 and len(words & words_of(old)) / len(words) >= CONTAINED
