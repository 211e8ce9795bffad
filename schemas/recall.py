"""Recall on the wire: memories surfaced into a prompt, and "remember harder" (spec §4, §4.1).

A relevance score belongs to a (query, record) pair, never to the record (spec §5): these
models exist only while a prompt is assembled, and in the prompt's stored ``extra``, where the
provenance critic reads what was actually in front of the model.
"""

from __future__ import annotations

from enum import StrEnum

from pydantic import AwareDatetime, Field

from schemas.dialog import DialogTurn
from schemas.events import ChannelRef, Wire
from schemas.ids import AgentHandle, Ulid
from schemas.memory import MemoryRecordPublic, ScoreBand


class RecallMode(StrEnum):
    """How candidates were ranked."""

    SEMANTIC = "semantic"
    """Cosine similarity to the input, with lexical overlap, recency and people."""
    LEXICAL = "lexical"
    """The encoder was unavailable: lexical overlap, recency and people only."""


class RelevanceSignals(Wire):
    """The parts a score is made of, each in [0, 1]."""

    semantic: float | None = Field(
        default=None, description="Cosine similarity to the input (None: ranked lexically)."
    )
    lexical: float = 0.0
    recency: float = 0.0
    participants: float = 0.0


class RetrievedMemory(Wire):
    """One record as surfaced into a prompt: its ID, summary and query-time relevance."""

    id: Ulid
    summary: str
    band: ScoreBand
    score: float = Field(ge=0, le=1, description="Normalised relevance to this input.")
    created_at: AwareDatetime
    emotion: str | None = None
    signals: RelevanceSignals = Field(default_factory=RelevanceSignals)
    superseded: list[str] = Field(
        default_factory=list,
        description="What a later record changed of what this one holds, one line each "
        "(a fact learned in its turns and replaced since).",
    )
    level: int = Field(default=1, ge=1, le=9, description="2 and up: a folded recollection.")
    first_at: AwareDatetime | None = Field(
        default=None, description="When what it remembers began (a recollection's span)."
    )
    last_at: AwareDatetime | None = Field(default=None, description="When what it remembers ended.")
    matched: list[Ulid] = Field(
        default_factory=list,
        description="Records folded beneath this recollection that matched the input: it "
        "is shown in their place (drill down for them).",
    )


class SurfacedMemories(Wire):
    """What the memory source put in a prompt; stored as ``prompts.extra["memory"]``.

    ``records`` are exactly the ones shown, best first, after the budget was applied.
    """

    mode: RecallMode
    records: list[RetrievedMemory] = Field(default_factory=list)
    candidates: int = Field(default=0, description="Visible candidates ranked.")
    synthesis: str | None = Field(
        default=None,
        description="The first records told as one account, citing their IDs (the recall "
        "task), shown in their place while they all fit.",
    )
    synthesized: int = Field(default=0, ge=0, description="How many records the account tells.")


class RememberHarderInput(Wire):
    """Ask for the verbatim dialog behind a memory.

    With ``channel`` set, the record must also be reachable from that channel (its own or its
    memory group) and visible to ``participants``: what a conversation may see, and no more.
    """

    agent: AgentHandle
    record_id: Ulid
    limit: int = Field(default=200, ge=1, le=2000, description="Most turns returned.")
    channel: ChannelRef | None = None
    participants: list[Ulid] = Field(default_factory=list)


class RememberHarderResult(Wire):
    """The record and the turns it was formed from, oldest first."""

    record: MemoryRecordPublic
    turns: list[DialogTurn] = Field(default_factory=list)
    truncated: bool = Field(default=False, description="More turns exist than ``limit``.")
    note: str | None = Field(
        default=None, description="Why there are no turns (no conversation, dialog culled)."
    )
    beneath: list[MemoryRecordPublic] = Field(
        default_factory=list,
        description="For a recollection: the memories of dialog folded beneath it, oldest "
        "first (remember harder on one of them for its words).",
    )
