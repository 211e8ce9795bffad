"""Autobiographical memory records (spec §5) as the wire sees them, and memory settings.

Sensitivity is checked against everyone present when a record could be surfaced:

* ``public``: anyone may be present.
* ``private`` (the default): everyone present took part in what the record remembers.
* ``confidential``: one-on-one only: exactly one person present, and a participant.
* ``restricted``: never surfaced into a conversation; reachable by the operator only.
"""

from __future__ import annotations

from enum import StrEnum

from pydantic import AwareDatetime, BaseModel, ConfigDict, Field, model_validator

from schemas.events import Wire
from schemas.ids import Ulid


class Sensitivity(StrEnum):
    """Who may be present for a record to be surfaced."""

    PUBLIC = "public"
    PRIVATE = "private"
    CONFIDENTIAL = "confidential"
    RESTRICTED = "restricted"


STRICTNESS = (
    Sensitivity.PUBLIC,
    Sensitivity.PRIVATE,
    Sensitivity.CONFIDENTIAL,
    Sensitivity.RESTRICTED,
)
"""Sensitivities from the widest audience to none."""


def stricter(first: Sensitivity, second: Sensitivity | None) -> Sensitivity:
    """The stricter of two sensitivities (``second`` None: ``first``)."""
    if second is None:
        return first
    return max(first, second, key=STRICTNESS.index)


def channel_floor(
    floors: dict[str, Sensitivity], *, key: str, service: str, group: str | None
) -> Sensitivity | None:
    """The least sensitivity set for a channel: by its key, then its group, then its service."""
    for name in (key, f"group:{group}" if group else None, service):
        if name is not None and name in floors:
            return floors[name]
    return None


class ScoreBand(StrEnum):
    """A retrieved record's normalised relevance, shown beside its summary (spec §4 step 2)."""

    STRONG = "strong"
    MODERATE = "moderate"
    WEAK = "weak"


class Emotion(StrEnum):
    """Emotional-state categories (spec §4.9); the top one of a distribution tags a record."""

    ENGAGED = "engaged"
    CURIOUS = "curious"
    SATISFIED = "satisfied"
    FRUSTRATED = "frustrated"
    ANXIOUS = "anxious"
    AMUSED = "amused"
    CONCERNED = "concerned"
    NEUTRAL = "neutral"


class MemoryRecordPublic(Wire):
    """A long-term memory record without its vector."""

    id: Ulid
    agent: str
    channel_id: str
    conversation_id: str | None = None
    summary: str
    importance: int = Field(ge=1, le=10)
    tags: list[str] = Field(default_factory=list)
    emotion: str | None = None
    sensitivity: Sensitivity = Sensitivity.PRIVATE
    participants: list[str] = Field(default_factory=list)
    turn_first: str | None = None
    turn_last: str | None = None
    created_at: AwareDatetime
    forgotten_at: AwareDatetime | None = None
    level: int = Field(
        default=1, ge=1, le=9, description="1: a memory of dialog; 2 and up: a recollection."
    )
    folded_into: Ulid | None = Field(
        default=None, description="The recollection this record was folded into, if any."
    )


class MemorySettings(BaseModel):
    """Memory formation, recall and retention (``PERSYN_MEMORY__<FIELD>``)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    chunk_tokens: int = Field(
        default=3000, ge=200, description="Consolidate a running conversation every so many tokens."
    )
    chunk_turns: int = Field(
        default=24,
        ge=0,
        le=10_000,
        description="...or every so many turns, whichever comes first (0: by tokens alone).",
    )
    opening_turns: int = Field(
        default=2,
        ge=0,
        le=20,
        description="A conversation's first turns, pinned in context beside its latest ones.",
    )
    retrieval_fraction: float = Field(
        default=0.7, gt=0, le=0.95, description="Share of the model's window retrieval may fill."
    )
    cull_below: int = Field(default=3, ge=1, le=10, description="Cull records rated below this.")
    cull_after_days: float = Field(default=14.0, gt=0, description="...and older than this.")
    dialog_retention_days: float | None = Field(
        default=None, gt=0, description="Raw dialog kept this long (unset: forever)."
    )
    run_record_retention_days: float = Field(
        default=30.0,
        gt=0,
        description="Per-message run records (prompts, drafts, outcomes, decisions, settled "
        "outbox, usage rows rolled into daily sums) kept this long.",
    )
    guardrail_retention_days: float = Field(
        default=90.0, gt=0, description="Guardrail firings kept this long."
    )

    # Formation (spec §4 step 8): a chunk is remembered as of its moment, beside earlier memories.
    formation_context_tokens: int = Field(
        default=2000, ge=0, description="Earlier memories shown when a new one forms."
    )
    maintenance_minutes: float = Field(
        default=60.0, ge=1, description="How often each agent's maintenance schedule fires."
    )

    # Recall (spec §4 step 2): score = weighted similarity, lexical overlap, recency, people.
    recall_weight_semantic: float = Field(
        default=0.6, ge=0, description="Weight of the cosine similarity to the input."
    )
    recall_weight_lexical: float = Field(
        default=0.15, ge=0, description="Weight of the share of the input's words in the record."
    )
    recall_weight_recency: float = Field(
        default=0.15, ge=0, description="Weight of the temporal decay value."
    )
    recall_weight_participants: float = Field(
        default=0.1, ge=0, description="Weight of the share of people present who were there."
    )
    recall_half_life_days: float = Field(
        default=30.0, gt=0, description="Age at which a record's recency value halves."
    )
    recall_band_strong: float = Field(
        default=0.6, gt=0, le=1, description="Scores from here up are shown as strong."
    )
    recall_band_moderate: float = Field(
        default=0.4, gt=0, le=1, description="Scores from here up are moderate, below weak."
    )
    recall_candidates: int = Field(
        default=50, ge=1, le=1000, description="Fewest candidates fetched per activation."
    )
    recall_max_candidates: int = Field(
        default=500, ge=1, le=5000, description="Most candidates fetched, however large the window."
    )
    recall_ef_search: int = Field(
        default=100, ge=10, le=1000, description="HNSW candidate list size (hnsw.ef_search)."
    )
    recall_encode_timeout_seconds: float = Field(
        default=5.0, gt=0, description="Longer than this, the input is ranked lexically."
    )

    # Synthesis (phi): the lines found, told as one account by the recall task.
    synthesis_min_lines: int = Field(
        default=6, ge=1, le=500, description="Fewer lines than this are shown as they are."
    )
    synthesis_lines: int = Field(
        default=12, ge=1, le=100, description="The best lines the account tells; the rest follow."
    )
    synthesis_chars: int = Field(default=1200, ge=200, le=6000, description="The longest account.")
    synthesis_timeout_seconds: float = Field(
        default=4.0, gt=0, le=30, description="Slower than this, the lines are shown as they are."
    )

    # Levels (Connectome): records fold into recollections, in the agent's voice, in the
    # background; recall shows the highest level that covers a match.
    fold_threshold: int = Field(
        default=6,
        ge=2,
        le=50,
        description="Records of one level and stream folded into one recollection of the next.",
    )
    fold_levels: int = Field(
        default=3,
        ge=1,
        le=5,
        description="Highest level a recollection reaches (1: nothing is folded).",
    )
    fold_chars: int = Field(
        default=900, ge=200, le=4000, description="Longest recollection a fold writes."
    )

    # Sensitivity controls: memories formed on a channel are at least this sensitive.
    channel_sensitivity: dict[str, Sensitivity] = Field(
        default_factory=dict,
        description="Least sensitivity of memories formed on a channel, keyed by channel key "
        "(service:channel), 'group:NAME' (a channel group) or service; most specific first.",
    )

    @model_validator(mode="after")
    def _recall_consistent(self) -> MemorySettings:
        if self.recall_band_moderate >= self.recall_band_strong:
            raise ValueError("memory.recall_band_moderate must be below memory.recall_band_strong")
        if self.recall_max_candidates < self.recall_candidates:
            raise ValueError(
                "memory.recall_max_candidates must be at least memory.recall_candidates"
            )
        weights = (
            self.recall_weight_semantic,
            self.recall_weight_lexical,
            self.recall_weight_recency,
            self.recall_weight_participants,
        )
        if sum(weights) <= 0:
            raise ValueError("at least one memory.recall_weight_* must be positive")
        return self
