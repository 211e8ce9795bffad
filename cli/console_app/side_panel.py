"""The side panel: the agent's live state, as the use cases read it.

The current step is what the in-flight runs say they are doing (the text the Web UI shows as
current details); then the open goals, the pending reminders, the heartbeat, and what this
conversation has cost so far from the usage ledger.
"""

from __future__ import annotations

from datetime import datetime

from rich.text import Text
from textual.widgets import Static

from usecases.agent_state import AgentState

ITEMS = 5
"""Goals or reminders listed before the rest is counted."""


def _when(at: datetime | None) -> str:
    return at.astimezone().strftime("%a %H:%M") if at is not None else "—"


def _listed(title: str, items: list[str]) -> list[str]:
    lines = [f"{title} ({len(items)})"]
    lines += [f"  • {item[:60]}" for item in items[:ITEMS]]
    if len(items) > ITEMS:
        lines.append(f"  … and {len(items) - ITEMS} more")
    return lines


def describe(state: AgentState) -> str:
    """The panel's text for ``state``."""
    lines = ["Now"]
    if state.problem:
        lines.append(f"  inbox unreadable: {state.problem[:80]}")
    lines += [f"  {step[:80]}" for step in state.current] or ["  idle"]
    lines.append("")
    lines += _listed("Goals", [g.title or g.description for g in state.goals])
    lines.append("")
    lines += _listed(
        "Reminders", [f"{_when(r.next_fire_at or r.at)} {r.objective}" for r in state.reminders]
    )
    lines.append("")
    beat = state.heartbeat
    if beat is None or not beat.scheduled:
        lines.append("Heartbeat: none")
    elif beat.paused:
        lines.append("Heartbeat: asleep")
    else:
        lines.append(f"Heartbeat: next {_when(beat.next_fire_at)}")
    lines.append("")
    lines.append("This conversation")
    lines.append(f"  ${state.cost_usd:.4f} · {state.tokens:,} tokens")
    return "\n".join(lines)


class SidePanel(Static):
    """The agent's live state; ``show`` replaces it, ``away`` says it cannot be read now."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(Text("reading the agent's state…"), id=id)
        self.state: AgentState | None = None

    def show(self, state: AgentState) -> None:
        """Show ``state``."""
        self.state = state
        self.update(Text(describe(state)))

    def away(self, reason: str) -> None:
        """The state cannot be read now; the last one known stays, marked as stale."""
        known = describe(self.state) if self.state is not None else ""
        self.update(Text(f"(stale: {reason})\n\n{known}".rstrip()))
