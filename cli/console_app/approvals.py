"""Approvals in the console: a prompt in the transcript for each action waiting for a person.

The console asks a desk for what waits and tells it each decision; the desk is the approvals
use case (``usecases.approvals``) when the deployment has it. The prompt shows what the agent
wants to do and takes ``a`` to approve or ``r`` to refuse; a decision is recorded with the
operator as who decided.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.message import Message
from textual.widgets import Static


@dataclass(frozen=True)
class WaitingAction:
    """An action that waits for a person's decision."""

    approval_id: str
    tool: str
    summary: str


class ApprovalDesk(Protocol):
    """Where the console reads what waits and sends decisions."""

    async def pending(self, *, agent: str) -> Sequence[WaitingAction]:
        """The agent's actions waiting for a decision, oldest first."""
        ...

    async def decide(
        self, *, agent: str, approval_id: str, approve: bool, by: str, reason: str | None
    ) -> None:
        """Approve or refuse one waiting action."""
        ...


class ApprovalPrompt(Vertical, can_focus=True):
    """One waiting action in the transcript: ``a`` approves it, ``r`` refuses it."""

    BINDINGS = [
        Binding("a", "decide(True)", "Approve"),
        Binding("r", "decide(False)", "Refuse"),
    ]

    class Decided(Message):
        """The operator decided ``action``."""

        def __init__(self, prompt: ApprovalPrompt, approve: bool) -> None:
            super().__init__()
            self.prompt = prompt
            self.approve = approve

    def __init__(self, action: WaitingAction) -> None:
        super().__init__(classes="approval")
        self.action = action
        self.decision: bool | None = None
        self.sending = False
        self.status = "waiting for you: a approves, r refuses"
        self._state = Static(Text(self.status), classes="head")

    def compose(self) -> ComposeResult:
        """What the agent asks to do, and how to answer."""
        yield Static(Text(f"⏸ {self.action.tool} asks for approval: {self.action.summary}"))
        yield self._state

    def action_decide(self, approve: bool) -> None:
        """Send the decision (once)."""
        if self.decision is None and not self.sending:
            self.sending = True
            self.post_message(self.Decided(self, approve))

    def decided(self, approve: bool) -> None:
        """The decision was recorded."""
        self.decision = approve
        self._say("approved" if approve else "refused")

    def refused_by_desk(self, reason: str) -> None:
        """The decision was not taken (already decided, expired...)."""
        self.sending = False
        self._say(f"not recorded: {reason}")

    def _say(self, status: str) -> None:
        self.status = status
        self._state.update(Text(status))
