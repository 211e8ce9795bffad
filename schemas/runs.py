"""What the orchestration asks Temporal about its own runs (how a child run ended)."""

from __future__ import annotations

from pydantic import Field

from schemas.events import Wire

HISTORY_LIMIT = 250
"""Events after which a long-lived run (an agent's inbox, a conversation) continues as new.

A worker that starts (after a crash, a deploy) replays the whole history of every open run
before it serves it, so this bounds how soon the agents answer again: 0.3-0.8 s of CPU per
1,000 events (``bench/replay_cost.py``), for each of 20 agents and their conversations at once
after a kill in the soak. Each continuation costs one small workflow task and a lookup of the
agent: an agent of the soak continues about every 7 minutes."""

PREVIOUS_HISTORY_LIMIT = 500
"""The default from the first lowering until ``HISTORY_LIMIT``: runs recorded then, whose
input omitted the limit, replay with it (``workflows/run_length.py``)."""

LEGACY_HISTORY_LIMIT = 1_000
"""The default before it was first lowered: runs recorded then, whose input omitted the
limit, replay with it."""


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
