"""What the orchestration asks Temporal about its own runs (how a child run ended)."""

from __future__ import annotations

from pydantic import Field

from schemas.events import Wire


class TerminationQuery(Wire):
    """Input of ``runs.termination``: the workflow run an operator terminated."""

    workflow_id: str = Field(min_length=1, max_length=1000)
    run_id: str | None = None


class Termination(Wire):
    """Who terminated a run and why, as the terminate request said (both may be empty)."""

    reason: str | None = None
    identity: str | None = None

    def describe(self) -> str:
        """One line for a completion marker: ``terminated by ops@host: wrong model``."""
        who = f" by {self.identity}" if self.identity else ""
        why = f": {self.reason}" if self.reason else " (no reason given)"
        return f"terminated{who}{why}"
