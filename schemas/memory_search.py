"""Dialog search on the wire: the query an agent's tool or the CLI sends, and the hits back.

Search ranks stored dialog by a fusion of BM25 (lexical) and cosine similarity (semantic) and
filters it by channel, keyword, regular expression, date range and tags (spec §4.6, §6).
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Annotated, Self

from pydantic import AfterValidator, AwareDatetime, Field, StringConstraints, model_validator

from schemas.events import Wire
from schemas.ids import AgentHandle, Ulid
from schemas.text import clean_text

MAX_QUERY_CHARS = 2_000
"""Longest query: a question or a few sentences; longer text is not a query."""

MAX_REGEX_CHARS = 256
"""Longest regular expression: bounds the work PostgreSQL does compiling it."""

MAX_TAGS = 20
MAX_CHANNELS = 200
MAX_LIMIT = 200

EARLIEST = datetime(1970, 1, 1, tzinfo=UTC)
"""No dialog is older than the ULID epoch: an earlier ``since`` is no bound at all."""

LATEST = datetime(3000, 1, 1, tzinfo=UTC)
"""A ``until`` past this is no bound at all; a ``since`` past it can match nothing."""


def _query(value: str) -> str:
    if not value.strip():
        return ""
    return clean_text(value, what="search query", max_chars=MAX_QUERY_CHARS)


def _keyword(value: str) -> str:
    return clean_text(value, what="keyword", max_chars=500)


def _regex(value: str) -> str:
    if "\x00" in value:
        raise ValueError("regular expression contains a NUL character: remove it")
    if not value:
        raise ValueError("regular expression is empty: give a pattern or leave it out")
    if len(value) > MAX_REGEX_CHARS:
        raise ValueError(
            f"regular expression is {len(value):,} characters; the limit is {MAX_REGEX_CHARS}: "
            "simplify it"
        )
    return value


Tag = Annotated[str, StringConstraints(min_length=1, max_length=64, strip_whitespace=True)]


def _as_utc(value: datetime) -> datetime:
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


def _aware(value: datetime | None) -> datetime | None:
    if value is None:
        return None
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


class DialogSearchQuery(Wire):
    """What to look for in an agent's stored dialog.

    ``query`` ranks; every other field filters. A query without ranking text (only filters)
    lists the matching turns newest first.
    """

    agent: AgentHandle
    query: Annotated[str, AfterValidator(_query)] = ""
    channel_ids: list[Ulid] | None = Field(
        default=None,
        max_length=MAX_CHANNELS,
        description="Channel row IDs to search (memory compartments); None searches them all.",
    )
    keyword: Annotated[str, AfterValidator(_keyword)] | None = Field(
        default=None,
        description="Turns must match this full-text expression (web-search syntax: words, "
        '"a phrase", -excluded, or).',
    )
    regex: Annotated[str, AfterValidator(_regex)] | None = Field(
        default=None,
        description="Turns' text must match this PostgreSQL regular expression "
        "(case-insensitive; start it with (?c) for case-sensitive).",
    )
    # A time without a zone (a model or a person wrote it) is taken as UTC, so none stays naive.
    since: Annotated[datetime, AfterValidator(_as_utc)] | None = Field(
        default=None, description="Only turns at or after this time."
    )
    until: Annotated[datetime, AfterValidator(_as_utc)] | None = Field(
        default=None, description="Only turns at or before this time."
    )
    tags: list[Tag] = Field(
        default_factory=list, max_length=MAX_TAGS, description="Turns must carry every tag."
    )
    limit: int = Field(default=10, ge=1, le=MAX_LIMIT)

    @model_validator(mode="after")
    def _check(self) -> Self:
        since, until = _aware(self.since), _aware(self.until)
        if since is not None and until is not None and since > until:
            raise ValueError(
                f"since ({since:%Y-%m-%d %H:%M}) is after until ({until:%Y-%m-%d %H:%M}): swap them"
            )
        if since is not None and since >= LATEST:
            raise ValueError(f"since ({since:%Y-%m-%d}) is in the far future: no dialog matches")
        if until is not None and until < EARLIEST:
            raise ValueError(f"until ({until:%Y-%m-%d}) is before 1970: no dialog is that old")
        # Bounds beyond what any stored turn can have are no bounds: drop them.
        self.since = since if since is not None and since > EARLIEST else None
        self.until = until if until is not None and until < LATEST else None
        if self.channel_ids is not None:
            # An empty list is a compartment with nothing in it, not "everywhere".
            self.channel_ids = list(dict.fromkeys(self.channel_ids))
        self.tags = list(dict.fromkeys(self.tags))
        return self

    @property
    def ranking_text(self) -> str:
        """The text results are ranked by: the query, else the keyword expression."""
        return self.query or (self.keyword or "")


class DialogHit(Wire):
    """One stored turn that matched, with the scores that placed it."""

    turn_id: Ulid
    conversation_id: Ulid
    channel_id: Ulid
    channel: str = Field(description="The channel's key, service:channel.")
    role: str
    speaker_id: str
    speaker_name: str
    text: str
    at: AwareDatetime
    tags: list[str] = Field(default_factory=list)
    source_ref: str | None = Field(
        default=None, description="The key the turn had in an imported file (e.g. D1:3)."
    )
    score: float = Field(description="The fused score results are sorted by (0 for listings).")
    lexical: float = Field(default=0.0, description="BM25 score (0: no query word matched).")
    semantic: float | None = Field(
        default=None, description="Cosine similarity to the query; None without an embedding."
    )


class DialogSearchResult(Wire):
    """Hits, best first, and whether the semantic half was missing."""

    hits: list[DialogHit]
    lexical_only: bool = Field(
        default=False, description="The encoder was unavailable: ranked by BM25 alone."
    )
    notice: str | None = Field(default=None, description="Why the search was degraded, if it was.")


def turn_embedding_text(*, speaker_name: str, at: datetime, text: str) -> str:
    """The text a turn's embedding is computed from: date and speaker give it its context.

    Encoding ``(8 May 2023) Caroline said, "..."`` rather than the bare text lets a question
    that names a person or a time find the turn (LoCoMo R@10 .55 against .30 bare).
    """
    when = _aware(at) or at
    return f'({when.day} {when:%B %Y}) {speaker_name} said, "{text}"'


class IndexTurnsInput(Wire):
    """Input of ``memory.index_turns``: embed an agent's turns that have no vector yet."""

    agent: AgentHandle
    limit: int = Field(default=1_000, ge=1, le=100_000)


class IndexTurnsResult(Wire):
    """How many turns were embedded, and why the run stopped early if it did."""

    embedded: int
    notice: str | None = None
