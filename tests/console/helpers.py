"""Driving the console with Textual's pilot against the real stack and a scripted model."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from textual.pilot import Pilot

from cli.console_app.app import ConsoleApp
from cli.console_app.approvals import ApprovalDesk, WaitingAction
from cli.console_app.session import ConsoleSession
from cli.console_app.transcript import Turn
from schemas.events import ChannelRef, InboundEvent, Speaker
from tests.harness import Harness, Stack, until

SIZE = (110, 36)
"""The terminal the tests draw on."""


def console(
    stack: Stack,
    harness: Harness,
    handle: str,
    *,
    name: str = "Wren",
    speaker: str = "ada",
    channel: str = "console",
    desk: ApprovalDesk | None = None,
    overrides: dict[str, object] | None = None,
) -> ConsoleApp:
    """The console on ``handle``, as ``persyn console`` opens it, served by ``harness``."""
    session = ConsoleSession(
        settings=stack.settings(task_queue=harness.task_queue, **(overrides or {})),
        handle=handle,
        agent_name=name,
        speaker=Speaker(speaker_id=speaker, display_name=speaker.title()),
        channel=ChannelRef(service="terminal", channel=channel),
    )
    return ConsoleApp(session, desk=desk)


async def send(pilot: Pilot[None], text: str) -> None:
    """Type ``text`` in the composer and press Enter."""
    app = pilot.app
    assert isinstance(app, ConsoleApp)
    app.composer.focus()
    app.composer.load_text(text)
    await pilot.press("enter")


async def settled(app: ConsoleApp, count: int = 1) -> None:
    """Wait until ``count`` turns have their outcome."""
    await until(lambda: sum(t.outcome is not None for t in app.transcript.turns()) >= count)


@dataclass
class Desk:
    """An approvals desk kept in memory: what waits, and the decisions the console sent."""

    waiting: list[WaitingAction] = field(default_factory=list)
    decisions: list[tuple[str, bool, str]] = field(default_factory=list)

    async def pending(self, *, agent: str) -> Sequence[WaitingAction]:
        """What waits (for every agent: the tests use one)."""
        return list(self.waiting)

    async def decide(
        self, *, agent: str, approval_id: str, approve: bool, by: str, reason: str | None
    ) -> None:
        """Record the decision; the action no longer waits."""
        self.decisions.append((approval_id, approve, by))
        self.waiting = [w for w in self.waiting if w.approval_id != approval_id]


def offline_session(stack: Stack, **overrides: object) -> ConsoleSession:
    """A session on ``handle`` nobody, for screens that need no agent."""
    return ConsoleSession(
        settings=stack.settings(**overrides),
        handle="nobody",
        agent_name="Wren",
        speaker=Speaker(speaker_id="ada", display_name="Ada"),
        channel=ChannelRef(service="terminal", channel="console"),
    )


class OfflineConsole(ConsoleApp):
    """The console with nothing to reach: what it would send is recorded instead."""

    def __init__(self, session: ConsoleSession) -> None:
        super().__init__(session)
        self.sent: list[InboundEvent] = []

    def follow(self) -> None:  # type: ignore[override]
        """Nothing to listen to."""

    def refresh_panel(self) -> None:  # type: ignore[override]
        """Nothing to read."""

    def answer(self, turn: Turn, event: InboundEvent, typed: str) -> None:  # type: ignore[override]
        """Record what would be sent."""
        self.sent.append(event)
