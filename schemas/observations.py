"""Observations on the wire: proposals from extraction, reconciliation verdicts, stored facts."""

from __future__ import annotations

from typing import Literal

from pydantic import AwareDatetime, Field

from schemas.events import Wire
from schemas.ids import AgentHandle, Ulid

Trust = Literal["self", "told", "inferred", "operator"]
"""Where a fact came from: the subject, someone else, the agent inferring, an operator."""

Action = Literal["ADD", "UPDATE", "DELETE", "NOOP"]


class ObservationSource(Wire):
    """The exchange a fact was learned from (empty for facts an operator sets)."""

    conversation_id: Ulid | None = None
    turn_first: Ulid | None = None
    turn_last: Ulid | None = None


class ObservationProposal(Wire):
    """A fact extraction proposes about one subject, before it is reconciled.

    ``person_id`` is empty when the fact is about the agent itself.
    """

    person_id: Ulid | None = None
    type: str = Field(min_length=1, max_length=64)
    value: str = Field(min_length=1, max_length=2000)
    trust: Trust
    observed_at: AwareDatetime
    source: ObservationSource = Field(default_factory=ObservationSource)


class Reconciliation(Wire):
    """The reconciliation call's verdict on one proposal against the subject's similar facts.

    ``target`` names the existing observation an UPDATE or DELETE retires; it must be one of
    the candidates the call was shown.
    """

    action: Action
    target: Ulid | None = None
    reason: str = Field(min_length=1, max_length=500)


class Observation(Wire):
    """A stored fact, as the context block, the dossier and the operator see it."""

    id: Ulid
    person_id: Ulid | None
    type: str
    value: str
    trust: Trust
    status: Literal["active", "superseded"]
    supersedes: Ulid | None
    observed_at: AwareDatetime
    reason: str | None = None


class ObservationSettings(Wire):
    """Extraction and reconciliation of observations (``PERSYN_OBSERVATIONS__*``)."""

    enabled: bool = Field(
        default=True, description="Extract facts about people after exchanges, in the background."
    )
    candidates: int = Field(
        default=5, ge=1, le=20, description="Similar active facts shown to reconciliation."
    )
    max_proposals: int = Field(
        default=12, ge=1, le=50, description="Most facts one extraction may propose."
    )


class ObserveInput(Wire):
    """Input of ``ObservationWorkflow``: the stretch of a conversation to learn facts from.

    The range is the one a consolidation started beside it covers: turns after
    ``after_turn`` through ``through_turn``.
    """

    observe_id: Ulid
    agent: AgentHandle
    conversation_id: Ulid
    after_turn: Ulid | None = None
    through_turn: Ulid


class ExtractInput(Wire):
    """Input of the blind extraction step: the range only, never what is already believed."""

    agent: AgentHandle
    conversation_id: Ulid
    after_turn: Ulid | None = None
    through_turn: Ulid


OFF_ON_PLAN = "observing people is off on this model's call plan: it cannot fill the schema"
"""Why an extraction asked nothing of the model (``StagePlan.run`` is off for ``observe``)."""


class ExtractResult(Wire):
    """What extraction proposed, each fact tied to a subject present in the range."""

    proposals: list[ObservationProposal] = Field(default_factory=list)
    dropped: int = Field(default=0, description="Facts about no one in the range, not kept.")
    skipped: str | None = Field(
        default=None, description="Why nothing was asked of the model (its plan has it off)."
    )


class ReconcileInput(Wire):
    """Input of one reconciliation: a proposal, and the ID its record takes if one is written.

    The ID is chosen by the workflow, so a retried step finds its own earlier write instead
    of writing the fact twice.
    """

    agent: AgentHandle
    observation_id: Ulid
    proposal: ObservationProposal


class ReconcileResult(Wire):
    """What one reconciliation did (``None`` action: the verdict was dropped)."""

    action: Action | None = None
    observation_id: Ulid | None = None
    target: Ulid | None = None
    reason: str = ""


class ObserveResult(Wire):
    """What an ``ObservationWorkflow`` run did."""

    proposed: int = 0
    added: int = 0
    updated: int = 0
    deleted: int = 0
    unchanged: int = 0
    dropped: int = 0
    skipped: str | None = Field(default=None, description="Why nothing was extracted, if off.")
