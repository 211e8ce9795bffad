"""The transcript: what was said, each turn told live, and notices, scrolling under the header.

A turn is one widget: the person's line is above it, and it holds the draft being written, the
tool indicators, and at the end the committed outcome in the draft's place. Text from people
and agents is shown as text, never read as markup.
"""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.message import Message
from textual.widgets import Static

from schemas.events import Outcome, Receipt
from schemas.tools import ToolCallRecord

SLOW_TOOLS = frozenset({"run_code", "generate_image", "edit_image"})
"""Tools whose results take a while (a sandbox task, an image render): shown as pending until
their result arrives (their names as ``activities.tools.builtin.code`` and ``images`` give them)."""


class Line(Static):
    """One committed line of the transcript; its kind (``you``, ``unprompted``...) styles it."""

    def __init__(self, text: str, kind: str) -> None:
        super().__init__(Text(text), classes=kind)
        self.kind = kind
        self.text = text


def tool_line(call: ToolCallRecord) -> str:
    """One tool call as an indicator: running, pending, done or failed."""
    if call.finished_at is None:
        return f"⚙ {call.name} … {'pending' if call.name in SLOW_TOOLS else 'running'}"
    if call.is_error:
        first = (call.result or "failed").strip().splitlines()[0][:80] if call.result else "failed"
        return f"✗ {call.name}: {first}"
    return f"✓ {call.name}"


class Turn(Vertical, can_focus=True):
    """The agent's answer to one message, as it is written and then as it ended.

    Focus it (Tab) and press ``t`` or Enter to open its activation's trace.
    """

    BINDINGS = [Binding("t,enter", "trace", "Trace", show=False)]

    class TraceAsked(Message):
        """The operator asked for this turn's trace."""

        def __init__(self, turn: Turn) -> None:
            super().__init__()
            self.turn = turn

    def __init__(self, event_id: str, agent_name: str) -> None:
        super().__init__(classes="turn")
        self.event_id = event_id
        self.agent_name = agent_name
        self.activation_id: str | None = None
        self.draft = ""
        self.phase = "draft"
        self.revised = False
        self.outcome: Outcome | None = None
        self.text = ""
        self.calls: dict[str, str] = {}
        self.woven_count = 0
        self._head = Static(Text(f"{agent_name} is thinking…"), classes="head")
        self._body = Static(Text(""), classes="draft")
        self._tools = Static(Text(""), classes="tools")

    def compose(self) -> ComposeResult:
        """The head (who, what is happening), the body (draft or reply), the tool indicators."""
        yield self._head
        yield self._body
        yield self._tools

    def piece(self, phase: str, text: str) -> None:
        """A piece of the reply as it is written; a revision replaces the draft it revises."""
        if phase != self.phase:
            self.phase = phase
            self.draft = ""
            if phase == "revise":
                self.revised = True
                self._head.update(Text(f"{self.agent_name} is revising its draft…"))
                self._body.set_class(True, "revising")
        self.draft += text
        self._body.update(Text(self.draft))

    def show_calls(self, calls: list[ToolCallRecord]) -> None:
        """The tool calls so far, each with its status."""
        self.calls = {call.call_id: tool_line(call) for call in calls}
        self._tools.update(Text("\n".join(self.calls.values())))
        self._tools.display = bool(self.calls)

    def woven(self, count: int) -> None:
        """Mark that the reply wove in ``count`` earlier deferred conclusions."""
        self.woven_count = count
        if count:
            self._tools.display = True
            lines = [*self.calls.values(), f"↺ wove in {count} earlier second thought(s)"]
            self._tools.update(Text("\n".join(lines)))

    def notice(self, text: str) -> None:
        """A line about the turn while it waits (no worker serves, Temporal is away)."""
        self._head.update(Text(f"{self.agent_name}: {text}"))

    def settle(self, receipt: Receipt) -> None:
        """The committed outcome replaces the draft; silence is shown with its stated reason."""
        marker = receipt.marker
        self.set_class(False, "live")
        self._body.set_class(False, "revising")
        if marker is None:
            self._show("accepted", f"[{self.agent_name} accepted the message]", "notice")
            return
        self.outcome = marker.outcome
        self.activation_id = marker.activation_id
        if marker.outcome is Outcome.SPOKE:
            self._show(self._said(), marker.text or "", "reply")
        elif marker.outcome is Outcome.DEGRADED:
            self._show(f"{self._said()} (degraded: {marker.reason})", marker.text or "", "reply")
        elif marker.outcome is Outcome.SILENT:
            self._show(
                "withdrawn", f"[{self.agent_name} chose not to reply: {marker.reason}]", "silent"
            )
        else:
            self._show("failed", f"[error: {marker.reason}]", "error")

    def failed(self, reason: str) -> None:
        """The turn could not be sent or answered: the reason, in its place."""
        self._show("not sent", f"[not sent: {reason}]", "error")

    def _said(self) -> str:
        return f"{self.agent_name} (revised)" if self.revised else self.agent_name

    def _show(self, head: str, text: str, kind: str) -> None:
        self.text = text
        self._head.update(Text(head if kind != "reply" else f"{head}:"))
        self._body.update(Text(text))
        self._body.set_classes(kind)

    def action_trace(self) -> None:
        """Ask the app for this turn's trace."""
        self.post_message(self.TraceAsked(self))


class Transcript(VerticalScroll):
    """The conversation as it scrolls: lines and turns, newest at the bottom."""

    def on_mount(self) -> None:
        """Stay at the newest as the transcript grows, until the operator scrolls up.

        Scrolling to the end as a widget is mounted is not enough: its text wraps and its parts
        are composed later, and the view would stop where the content ended before them.
        """
        self.anchor()

    def say(self, text: str, kind: str) -> Line:
        """Add a committed line (``you``, ``unprompted``, ``notice``, ``error``)."""
        line = Line(text, kind)
        self.mount(line)
        self.scroll_end(animate=False)
        return line

    def turn(self, event_id: str, agent_name: str) -> Turn:
        """Add the turn answering ``event_id``, to be told live."""
        turn = Turn(event_id, agent_name)
        turn.add_class("live")
        self.mount(turn)
        self.scroll_end(animate=False)
        return turn

    def turns(self) -> list[Turn]:
        """Every turn shown, oldest first."""
        return list(self.query(Turn))

    def lines(self, kind: str | None = None) -> list[Line]:
        """Every line shown (of ``kind``), oldest first."""
        return [line for line in self.query(Line) if kind is None or line.kind == kind]

    def clear(self) -> None:
        """A fresh page."""
        self.remove_children()
