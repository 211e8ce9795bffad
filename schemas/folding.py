"""Folding (Connectome's levels): records of one level become one recollection of the next.

A *stream* is the records that may be folded together: one agent, one channel, one
sensitivity and one set of participants, so a recollection is visible to exactly the people
its records were (its fences are theirs). When a stream holds ``fold_threshold`` live,
unfolded records of a level below ``fold_levels``, the oldest of them fold into one
recollection, written as of the last one's moment from them and the stream's previous
recollection of that level, never from anything later.
"""

from __future__ import annotations

from enum import StrEnum

from pydantic import Field

from schemas.events import Wire
from schemas.ids import AgentHandle, Ulid


class FoldMode(StrEnum):
    """Who wrote a recollection."""

    MODEL = "model"
    """The ``fold`` task's model, in the agent's voice."""
    PLAIN = "plain"
    """No model on this plan (or its reply did not fit): the records' openings, joined."""


class FoldingInput(Wire):
    """Input of ``FoldingWorkflow``: one agent's pass over everything ready to fold."""

    agent: AgentHandle
    folded_before: int = Field(
        default=0, ge=0, description="Folds done by earlier runs of this pass (continue-as-new)."
    )


class FoldPlanInput(Wire):
    """Ask which batches are ready to fold."""

    agent: AgentHandle
    limit: int = Field(default=20, ge=1, le=200, description="Most batches returned.")


class FoldBatch(Wire):
    """Records of one stream and level, oldest first, to fold into one recollection."""

    agent: AgentHandle
    level: int = Field(ge=1, le=8, description="The records' level; the recollection's is one up.")
    channel_id: Ulid
    records: list[Ulid] = Field(min_length=2, max_length=50)


class FoldPlan(Wire):
    """The batches ready now, lowest level and oldest first."""

    batches: list[FoldBatch] = Field(default_factory=list)


class FoldInput(Wire):
    """One fold: the batch, and the ID the workflow chose (a retry finds its own write)."""

    recollection_id: Ulid
    batch: FoldBatch


class FoldResult(Wire):
    """What one fold did."""

    recollection_id: Ulid | None = None
    level: int | None = None
    mode: FoldMode | None = None
    skipped: str | None = Field(default=None, description="Why nothing was folded.")


class FoldingResult(Wire):
    """What one run of the pass did."""

    folded: list[Ulid] = Field(default_factory=list, description="Recollections written.")
    skipped: int = Field(default=0, description="Batches that changed before they folded.")
    continued: bool = Field(default=False, description="More was ready: the pass continued.")
