"""What the steps of one activation learn about its turn, held by ``ActivationWorkflow``.

The workflow owns this state and passes it from step to step; each step returns what it
learned. It lives in the run, never in a module: a worker without the determinism sandbox
shares module globals between runs, and a run's state must be rebuilt from its history alone.
It never crosses the wire (no activity, signal or result carries it), so fields may change
freely.
"""

from __future__ import annotations

from pydantic import Field

from schemas.activation import Draft
from schemas.deliberation import DeliberationPlan, Lens, Verdict
from schemas.events import Wire


class TurnState(Wire):
    """What deliberate and decide learned, for the step that records the decision."""

    plan: DeliberationPlan | None = Field(
        default=None, description="How the candidate is deliberated; none if planning failed."
    )
    lens: Lens | None = Field(default=None, description="The lens drawn for this turn.")
    lenses: list[Lens] = Field(default_factory=list, description="Every critic that runs.")
    objections: int = Field(default=0, ge=0, description="Objections the inline critics raised.")
    refined: bool = Field(default=False, description="The inline refinement replaced the draft.")
    verdict: Verdict | None = Field(default=None, description="The decide step's verdict.")


class DeliberatedTurn(Wire):
    """What the deliberate step hands on: the draft to decide on and what it learned."""

    draft: Draft
    turn: TurnState
