"""Context sources: open goals in every activation; quick facts; past autonomous outcomes.

Goals are a standing source (spec §4.8), so they shape every response; quick facts bring the
scratchpad about the people present (and about the agent itself); a reminder or heartbeat sees
what earlier firings of the same kind did, so a similar reminder learns what worked.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from activities.context.fencing import AUTONOMY_LOG, GOALS, QUICK_FACTS
from activities.context.model import ContextBlock, ContextRequest, Trim
from activities.memory.explicit import is_kept_request
from schemas.autonomy import FiringKind, GoalPublic, QuickFact
from schemas.events import Trigger
from store.db import Database
from store.queries.autonomy import recent_autonomy_on
from store.queries.goals import get_facts_on, list_goals_on


class GoalsSource:
    """The agent's open goals, with their IDs so its tools can act on them."""

    name = "goals"
    required = False

    def __init__(self, db: Database, stall_days: float = 7.0) -> None:
        self._db = db
        self._stall = timedelta(days=stall_days)

    async def fetch(self, request: ContextRequest) -> ContextBlock | None:
        """Open and in-progress goals, oldest first, with their steps; stalled ones say so."""
        goals = await list_goals_on(self._db.lane, agent=request.agent.handle)
        if not goals:
            return None
        items = [goal_item(g, now=request.input.now, stall=self._stall) for g in goals]
        return ContextBlock(
            source=self.name,
            title="Your open goals (record their progress with your goal tools):",
            items=items,
            order=40,
            trim=Trim.OLDEST_FIRST,
            provenance=GOALS,
        )


def goal_item(goal: GoalPublic, *, now: datetime, stall: timedelta) -> str:
    """One goal as the model reads it: what it is, then how it is going."""
    what = f"{goal.title}: {goal.description}" if goal.title else goal.description
    lines = [
        f"- [{goal.goal_id}] {what}" + (" (an interest)" if goal.kind.value == "interest" else "")
    ]
    if goal.status.value == "in_progress":
        lines.append("  in progress" + (f": {goal.state}" if goal.state else ""))
    elif goal.state:
        lines.append(f"  state: {goal.state}")
    if goal.next_step:
        lines.append(f"  next step: {goal.next_step}")
    if goal.last_step and goal.last_step_at:
        lines.append(f"  last step ({goal.last_step_at:%Y-%m-%d}): {goal.last_step}")
    if goal.blocked_by:
        lines.append(f"  blocked by: {goal.blocked_by}")
    if goal.note:
        lines.append(f"  latest note: {goal.note}")
    moved = goal.moved_at or goal.updated_at
    if now - moved >= stall:
        lines.append(
            f"  stalled: it has not moved since {moved:%Y-%m-%d} ({(now - moved).days} days)"
        )
    return "\n".join(lines)


class QuickFactsSource:
    """Scratchpad facts about the people present and about the agent itself."""

    name = "quick_facts"
    required = False

    def __init__(self, db: Database) -> None:
        self._db = db

    async def fetch(self, request: ContextRequest) -> ContextBlock | None:
        """Facts about ``self`` and each participant."""
        people = list(dict.fromkeys([request.input.person_id, *request.input.participants]))
        facts = await get_facts_on(
            self._db.lane, agent=request.agent.handle, subjects=["self", *people]
        )
        if not facts:
            return None
        speaker = request.input.event.speaker
        names = {"self": "you", request.input.person_id: speaker.display_name or speaker.speaker_id}
        items = [_fact_item(names.get(f.subject, f.subject), f) for f in facts]
        return ContextBlock(
            source=self.name,
            title="Quick facts from your scratchpad (subject: key = value):",
            items=items,
            order=45,
            trim=Trim.LAST_FIRST,
            provenance=QUICK_FACTS,
        )


def _fact_item(subject: str, fact: QuickFact) -> str:
    # A kept request's key carries a digest that keeps two requests apart; a small model
    # copied it into its replies ("(130c8)"), so it is left out of what the model reads.
    if is_kept_request(fact.key):
        return f"- {subject}: asked you to remember = {fact.value}"
    return f"- {subject}: {fact.key} = {fact.value}"


class AutonomyOutcomesSource:
    """For a reminder or heartbeat: what the latest firings of the same kind did."""

    name = "autonomy"
    required = False

    def __init__(self, db: Database, limit: int = 5) -> None:
        self._db = db
        self._limit = limit

    async def fetch(self, request: ContextRequest) -> ContextBlock | None:
        """Earlier outcomes, newest first (the current firing excluded)."""
        trigger = request.input.event.trigger
        if trigger not in (Trigger.REMINDER, Trigger.HEARTBEAT):
            return None
        kind = FiringKind.HEARTBEAT if trigger is Trigger.HEARTBEAT else FiringKind.REMINDER
        entries = await recent_autonomy_on(
            self._db.lane, agent=request.agent.handle, kind=kind, limit=self._limit + 1
        )
        entries = [e for e in entries if e.event_id != request.input.event.event_id]
        if not entries:
            return None
        items = []
        for entry in entries[: self._limit]:
            what = entry.objective or "heartbeat"
            tools = ", ".join(entry.tools) or "no tools"
            said = (entry.said or "(silent)").replace("\n", " ")[:300]
            items.append(f"- {entry.fired_at:%Y-%m-%d %H:%M} {what} -> {tools}; you said: {said}")
        return ContextBlock(
            source=self.name,
            title=f"What your recent {kind.value}s did (newest first):",
            items=items,
            order=46,
            trim=Trim.LAST_FIRST,
            provenance=AUTONOMY_LOG,
        )
