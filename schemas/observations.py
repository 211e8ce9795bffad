"""Observations on the wire: proposals from extraction, reconciliation verdicts, stored facts."""

from __future__ import annotations

from typing import Literal

from pydantic import AwareDatetime, Field

from schemas.events import Wire
from schemas.ids import Ulid

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
