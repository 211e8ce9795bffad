"""Memory formation, culling and withdrawal on the wire (spec §4 step 8, §4.1, §4.9, §5).

A *formation* is one range of a conversation's turns on its way to becoming one memory record.
Its working state (the draft summary, the rating, the classification) lives in PostgreSQL;
workflow history carries only formation IDs and small values.

The ``*Reply`` models are what the model is asked to answer with (schema-constrained output);
the rest are workflow and activity inputs and results.
"""

from __future__ import annotations

from enum import StrEnum

from pydantic import AwareDatetime, BaseModel, Field

from schemas.events import ChannelRef, Wire
from schemas.ids import AgentHandle, Ulid
from schemas.memory import Emotion, MemoryRecordPublic, Sensitivity

# -- consolidation ----------------------------------------------------------------------------


class FormationReason(StrEnum):
    """Why a consolidation started."""

    CHUNK = "chunk"
    """A long conversation reached ``chunk_tokens`` since its last consolidated turn."""
    CLOSE = "close"
    """The conversation closed with turns not yet consolidated."""
    STOP = "stop"
    """The stack is stopping (``persyn down``): what was said so far, as of now."""
    SWEEP = "sweep"
    """Maintenance: retry ranges whose earlier consolidation failed."""
    IMPORT = "import"
    """Dialog brought in with ``persyn import --consolidate``."""


class TurnRange(Wire):
    """Turns of one conversation in dialog order: after ``after_turn`` up to ``through_turn``."""

    conversation_id: Ulid
    after_turn: Ulid | None = Field(
        default=None, description="Exclusive lower bound; none starts at the first turn."
    )
    through_turn: Ulid = Field(description="Inclusive upper bound.")


class ConsolidationInput(Wire):
    """Input of ``ConsolidationWorkflow``."""

    consolidation_id: Ulid
    agent: AgentHandle
    reason: FormationReason
    channel: ChannelRef | None = Field(default=None, description="Where ``range`` was said.")
    range: TurnRange | None = Field(default=None, description="None: only pick up failed ones.")
    pickup_limit: int = Field(
        default=3, ge=0, le=50, description="Earlier failed ranges this run also retries."
    )


class ConsolidationResult(Wire):
    """What one consolidation formed and what it left for a later pass."""

    consolidation_id: Ulid
    formed: list[Ulid] = Field(default_factory=list, description="New memory record IDs.")
    failed: list[Ulid] = Field(default_factory=list, description="Formation IDs left to retry.")
    empty: int = Field(default=0, description="Ranges with no stored turns left to remember.")
    turns_indexed: int = 0


class FormationSettingsQuery(Wire):
    """Input of ``memory.formation_settings``."""

    agent: AgentHandle


class FormationSettings(Wire):
    """What a conversation needs to decide when to consolidate."""

    chunk_tokens: int = Field(gt=0)
    chunk_turns: int = Field(default=0, ge=0, description="0: by tokens alone.")


class ClaimFormationsInput(Wire):
    """Register this run's range and claim earlier failed ones of the same agent."""

    consolidation_id: Ulid
    agent: AgentHandle
    channel: ChannelRef | None = None
    range: TurnRange | None = None
    pickup_limit: int = Field(default=3, ge=0, le=50)


class ClaimedFormation(Wire):
    """A range this run will form, oldest first."""

    formation_id: Ulid
    conversation_id: Ulid
    picked_up: bool = Field(default=False, description="A retry of an earlier failure.")


class ClaimedFormations(Wire):
    """Result of the claim."""

    formations: list[ClaimedFormation] = Field(default_factory=list)


class FormationStep(Wire):
    """Input of every per-range step: which formation to work on."""

    formation_id: Ulid


class PredecessorsPending(Wire):
    """Earlier ranges of the same compartment still being formed by other runs."""

    running: int = 0


class SummaryDone(Wire):
    """The draft summary is stored with the formation."""

    formation_id: Ulid
    turns: int = Field(description="Turns summarised; 0 means nothing is left to remember.")
    earlier_memories: int = 0
    reused: bool = Field(default=False, description="A retry found the draft already written.")


class RatingDone(Wire):
    """The importance rating is stored with the formation."""

    formation_id: Ulid
    importance: int = Field(ge=1, le=10)


class ClassificationDone(Wire):
    """Emotion, sensitivity and topic tags are stored with the formation."""

    formation_id: Ulid
    emotion: Emotion
    sensitivity: Sensitivity
    tags: list[str] = Field(default_factory=list)


class StoredMemory(Wire):
    """The formation became a memory record."""

    formation_id: Ulid
    record_id: Ulid
    embedded: bool = Field(description="False: stored without a vector, filled in later.")


class FormationFailure(Wire):
    """A formation gave up for now; a later consolidation picks it up."""

    formation_id: Ulid
    error: str = Field(max_length=1000)


class IndexDialogInput(Wire):
    """Fill missing vectors of the agent's dialog turns and memory records."""

    agent: AgentHandle
    limit: int = Field(default=1000, ge=1, le=100_000)


class IndexDialogResult(Wire):
    """How many vectors were filled; an unavailable encoder is reported, never raised."""

    turns: int = 0
    memories: int = 0
    error: str | None = None


# -- what the model answers with ----------------------------------------------------------------


class SummaryReply(BaseModel):
    """The first-person recollection of a stretch of dialog."""

    summary: str = Field(
        min_length=1,
        max_length=8000,
        description="First person, past tense, in my own voice; inferences stay marked as such.",
    )


class RatingReply(BaseModel):
    """Importance against the rubric: each criterion 0-10, then the overall rating 1-10."""

    emotional_significance: int = Field(ge=0, le=10)
    decision_making: int = Field(ge=0, le=10)
    novelty: int = Field(ge=0, le=10)
    continuation: int = Field(ge=0, le=10, description="Continues an ongoing theme.")
    explicit_importance: int = Field(ge=0, le=10, description="Someone said it matters.")
    importance: int = Field(ge=1, le=10)
    reason: str = Field(default="", max_length=500)


class EmotionDistribution(BaseModel):
    """Probability of each emotional-state category (need not sum to one; normalised later)."""

    engaged: float = Field(default=0.0, ge=0.0, le=1.0)
    curious: float = Field(default=0.0, ge=0.0, le=1.0)
    satisfied: float = Field(default=0.0, ge=0.0, le=1.0)
    frustrated: float = Field(default=0.0, ge=0.0, le=1.0)
    anxious: float = Field(default=0.0, ge=0.0, le=1.0)
    amused: float = Field(default=0.0, ge=0.0, le=1.0)
    concerned: float = Field(default=0.0, ge=0.0, le=1.0)
    neutral: float = Field(default=0.0, ge=0.0, le=1.0)


class ClassificationReply(BaseModel):
    """My emotional state, who may hear this memory again, and what it was about."""

    emotions: EmotionDistribution
    sensitivity: Sensitivity
    tags: list[str] = Field(default_factory=list, max_length=12)


# -- maintenance: culling, retention, sweeps ----------------------------------------------------


class MaintenanceInput(Wire):
    """Input of ``MaintenanceWorkflow`` (one firing of ``maintenance/{handle}``)."""

    agent: AgentHandle


class CullInput(Wire):
    """Delete the agent's low-rated old memories (thresholds come from settings)."""

    agent: AgentHandle
    now: AwareDatetime
    dry_run: bool = False
    actor: str = Field(default="maintenance", min_length=1, max_length=200)
    show: int = Field(default=50, ge=0, le=100_000, description="Records listed in the result.")


class CulledMemory(Wire):
    """A record culled (or that would be)."""

    record_id: Ulid
    importance: int
    created_at: AwareDatetime
    summary: str


class CullResult(Wire):
    """What culling removed (or, dry, would remove)."""

    agent: AgentHandle
    below: int
    cutoff: AwareDatetime
    dry_run: bool
    count: int
    records: list[CulledMemory] = Field(default_factory=list)


class PurgeInput(Wire):
    """Drop raw dialog past its retention window and expired completion markers."""

    agent: AgentHandle
    now: AwareDatetime


class PurgeResult(Wire):
    """How much the purge removed."""

    dialog_turns: int = 0
    markers: int = 0
    run_records: dict[str, int] = Field(
        default_factory=dict, description="Per-message rows removed, by table."
    )


class PendingFormationsQuery(Wire):
    """Input of ``memory.pending_formations``."""

    agent: AgentHandle


class PendingFormations(Wire):
    """Ranges whose consolidation failed and may be retried."""

    failed: int = 0


class MaintenanceResult(Wire):
    """What one maintenance run did."""

    culled: int = 0
    dialog_turns: int = 0
    markers: int = 0
    vectors_filled: int = 0
    sweep: Ulid | None = Field(default=None, description="The consolidation it started, if any.")
    folding: str | None = Field(
        default=None, description="The folding pass it started (``folding/{handle}``), if any."
    )


# -- the operator's view ------------------------------------------------------------------------


class MemoryAction(StrEnum):
    """What an audit entry records."""

    FORGET = "forget"
    CULL = "cull"
    SENSITIVITY = "sensitivity"
    """An operator changed who may hear the record (``from -> to: why`` in the reason)."""


class MemoryAuditEntry(Wire):
    """Who withdrew which record, when and why; never what it said."""

    id: Ulid
    agent: str
    record_id: Ulid
    action: MemoryAction
    actor: str
    reason: str | None = None
    summary: str | None = Field(
        default=None,
        description="Always empty now: a withdrawal erases the text; entries written before "
        "that change held it until the migration that emptied them.",
    )
    derived: list[str] = Field(
        default_factory=list, description="Records derived from it at the time (kept)."
    )
    at: AwareDatetime


class MemoryDetail(Wire):
    """One record as ``persyn memory show`` prints it."""

    record: MemoryRecordPublic
    channel_key: str | None = None
    embedded: bool
    derived_from: list[str] = Field(default_factory=list)
    derived: list[MemoryRecordPublic] = Field(default_factory=list)
    audit: list[MemoryAuditEntry] = Field(default_factory=list)


class SensitivityChange(Wire):
    """An operator's override of a record's sensitivity, with its audit entry."""

    record: MemoryRecordPublic
    before: Sensitivity
    audit: MemoryAuditEntry | None = Field(
        default=None, description="None when the record already had that sensitivity."
    )


class ForgetResult(Wire):
    """A withdrawn record, its audit entry and what derived from it (left in place)."""

    record: MemoryRecordPublic
    audit: MemoryAuditEntry
    derived: list[MemoryRecordPublic] = Field(default_factory=list)
    already: bool = Field(default=False, description="It had been forgotten before.")
    dissolved: list[Ulid] = Field(
        default_factory=list,
        description="Recollections folded from it, forgotten with it (their other records "
        "fold again).",
    )
