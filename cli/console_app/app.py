"""The console app: transcript and composer on the left, the agent's live state on the right.

Keys: Enter sends, Ctrl+J starts a new line, F2 browses the directory, F3 opens the latest
reply's trace (Tab to a reply and ``t`` opens its own), F4 switches agent, Ctrl+N starts a
new conversation, Ctrl+Q leaves. Commands typed in the composer: see ``identity.COMMANDS``.
"""

from __future__ import annotations

import contextlib

from rich.text import Text
from textual import work
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.widgets import Footer, Static

from cli.console_app import feed
from cli.console_app.agents_screen import AgentsScreen
from cli.console_app.approvals import ApprovalDesk, ApprovalPrompt
from cli.console_app.composer import Composer
from cli.console_app.directory_screen import DirectoryScreen
from cli.console_app.identity import COMMANDS, Command, command_of, renamed
from cli.console_app.session import ConsoleSession
from cli.console_app.side_panel import SidePanel
from cli.console_app.styles import CSS
from cli.console_app.trace_screen import TraceScreen
from cli.console_app.transcript import Transcript, Turn
from cli.console_app.turn import aftermath, tell
from cli.console_app.words import first_line, reason_of
from schemas.events import InboundEvent
from schemas.text import InvalidTextError

PANEL_IDLE_S = 10.0
"""How often the side panel is read while nothing happens (a turn reads it at once)."""
APPROVALS_EVERY_S = 2.0
"""How often the console asks the desk what waits for a decision."""


class ConsoleApp(App[None]):
    """``persyn console``: one operator, one agent at a time, the whole screen."""

    CSS = CSS
    TITLE = "persyn console"
    ENABLE_COMMAND_PALETTE = False
    BINDINGS = [
        Binding("ctrl+q", "quit", "Quit", priority=True),
        Binding("f2", "directory", "Directory"),
        Binding("f3", "trace", "Trace"),
        Binding("f4", "agents", "Agent"),
        Binding("ctrl+n", "new_page", "New"),
        Binding("escape", "focus_composer", "Compose", show=False),
    ]

    def __init__(self, session: ConsoleSession, *, desk: ApprovalDesk | None = None) -> None:
        super().__init__()
        self.session = session
        self.desk = desk
        self.transcript = Transcript(id="transcript")
        self.composer = Composer(id="composer")
        self.panel = SidePanel(id="side")
        self.link = Static(Text(""), id="link", classes="ok")
        self.title_bar = Static(Text(""), id="title")
        self.problems: dict[str, str] = {}
        self.listening = False
        """Whether unprompted messages are being listened for (the store answers)."""
        self.prompts: dict[str, ApprovalPrompt] = {}

    def compose(self) -> ComposeResult:
        """Title, transcript, link status, composer; the side panel; the keys."""
        yield self.title_bar
        with Horizontal():
            with Vertical(id="main"):
                yield self.transcript
                yield self.link
                yield self.composer
            yield self.panel
        yield Footer()

    def on_mount(self) -> None:
        """Start listening, read the panel, and put the cursor in the composer."""
        self._retitle()
        self.composer.focus()
        self.transcript.say("Enter sends · Ctrl+J new line · /help for commands", "notice")
        self.follow()
        self.refresh_panel()
        self.set_interval(PANEL_IDLE_S, self.refresh_panel)
        if self.desk is not None:
            self.set_interval(APPROVALS_EVERY_S, self.look_for_approvals)

    async def on_unmount(self) -> None:
        """Close the store."""
        with contextlib.suppress(Exception):
            await self.session.aclose()

    def _retitle(self) -> None:
        speaker = self.session.speaker
        shown = speaker.display_name or speaker.speaker_id
        self.title_bar.update(
            Text(
                f"{self.session.agent_name} ({self.session.handle}) · you are {shown} "
                f"[{speaker.speaker_id}] · {self.session.channel.key}"
            )
        )

    def health(self, source: str, problem: str | None) -> None:
        """Say that part of the link is down (``problem``) or back (``None``)."""
        had = bool(self.problems)
        if problem is None:
            self.problems.pop(source, None)
        else:
            self.problems[source] = problem
        if self.problems:
            self.link.update(Text("⚠ " + "; ".join(self.problems.values())))
            self.link.set_class(False, "ok")
        elif had:
            self.link.set_class(True, "ok")
            self.transcript.say("[reconnected]", "notice")

    # Live: unprompted messages, the side panel, approvals.

    @work(exclusive=True, group="feed")
    async def follow(self) -> None:
        """Show the agent's unprompted messages on this channel while the console is open."""
        name = self.session.agent_name

        def show(text: str) -> None:
            self.transcript.say(f"{name} (unprompted)> {text}", "unprompted")

        def listening(problem: str | None) -> None:
            self.listening = problem is None
            self.health("store", problem)
            if problem is None and "state" in self.problems:
                self.refresh_panel()  # back: the panel need not wait for its next round

        await feed.follow_unprompted(self.session, show, listening)

    @work(exclusive=True, group="panel")
    async def refresh_panel(self) -> None:
        """Read the agent's live state into the side panel."""
        try:
            state = await self.session.state()
        except Exception as err:  # Temporal or the store is away: the panel says so
            reason = first_line(err)
            self.panel.away(reason)
            self.health("state", f"the agent's state cannot be read ({reason})")
            return
        self.health("state", None)
        self.panel.show(state)

    @work(exclusive=True, group="approvals")
    async def look_for_approvals(self) -> None:
        """Put a prompt in the transcript for each action newly waiting for a decision."""
        if self.desk is None:
            return
        try:
            waiting = await self.desk.pending(agent=self.session.handle)
        except Exception:  # the panel's health line already says when the stack is away
            return
        for action in waiting:
            if action.approval_id not in self.prompts:
                prompt = ApprovalPrompt(action)
                await self.transcript.mount(prompt)
                self.transcript.scroll_end(animate=False)
                self.set_focus(prompt)  # now, before it is drawn: one key answers it
                self.prompts[action.approval_id] = prompt

    async def on_approval_prompt_decided(self, message: ApprovalPrompt.Decided) -> None:
        """Send the operator's decision to the desk."""
        if self.desk is None:
            return
        try:
            await self.desk.decide(
                agent=self.session.handle,
                approval_id=message.prompt.action.approval_id,
                approve=message.approve,
                by=self.session.speaker.speaker_id,
                reason=None,
            )
        except Exception as err:
            message.prompt.refused_by_desk(first_line(err))
            return
        message.prompt.decided(message.approve)
        self.composer.focus()

    # Sending.

    def on_composer_submitted(self, message: Composer.Submitted) -> None:
        """A message to send, or a command."""
        text = message.text
        command = command_of(text)
        if command is not None:
            self.composer.sent(text)
            self.run_command(command)
            return
        if text.lstrip().startswith("//"):
            text = text.lstrip()[1:]
        try:
            event = self.session.event(text)
        except ValueError as err:
            self.transcript.say(f"[not sent: {reason_of(err)}]", "error")
            return  # the text stays in the composer, to be fixed
        self.composer.sent(message.text)
        shown = self.session.speaker.display_name or self.session.speaker.speaker_id
        self.transcript.say(f"{shown}> {event.text}", "you")
        turn = self.transcript.turn(event.event_id, self.session.agent_name)
        self.answer(turn, event, message.text)

    @work(group="turns")
    async def answer(self, turn: Turn, event: InboundEvent, typed: str) -> None:
        """Tell the turn live; a turn that could not be sent gives its text back."""
        try:
            receipt = await tell(self.session, turn, event)
        except Exception as err:  # Temporal or the store is away: nothing typed is lost
            turn.failed(f"{first_line(err)} (your text is back in the composer)")
            self.composer.restore(typed)
            return
        if receipt.marker is not None and receipt.marker.conversation_id:
            self.session.conversation_id = receipt.marker.conversation_id
        self.refresh_panel()
        await aftermath(self.session, turn)

    # Commands and keys.

    def run_command(self, command: Command) -> None:
        """Do what a ``/`` line asks."""
        if command.verb == "/rename":
            self.rename(command.argument)
        elif command.verb == "/agent":
            self.switch(command.argument)
        elif command.verb == "/new":
            self.action_new_page()
        elif command.verb == "/trace":
            self.action_trace()
        elif command.verb == "/people":
            self.action_directory()
        elif command.verb in {"/quit", "/exit"}:
            self.exit()
        elif command.verb == "/help":
            self.transcript.say("\n".join(COMMANDS.values()), "notice")
        else:
            self.transcript.say(
                f"[unknown command {command.verb[:40]!r}: /help lists them]", "error"
            )

    def rename(self, name: str) -> None:
        """Be called ``name`` by the agent from the next message on (same person)."""
        try:
            self.session.speaker = renamed(self.session.speaker, name)
        except InvalidTextError as err:
            self.transcript.say(f"[not renamed: {err}]", "error")
            return
        self._retitle()
        self.transcript.say(
            f"[you are now {self.session.speaker.display_name} to "
            f"{self.session.agent_name}; the same person as before]",
            "notice",
        )

    @work(exclusive=True, group="switch")
    async def switch(self, handle: str | None) -> None:
        """Talk with ``handle`` from now on."""
        if not handle:
            self.action_agents()
            return
        try:
            await self.session.switch_to(handle.strip())
        except Exception as err:
            self.transcript.say(f"[not switched: {first_line(err)}]", "error")
            return
        self.transcript.clear()
        self._retitle()
        self.transcript.say(f"[talking with {self.session.agent_name} now]", "notice")
        self.follow()
        self.refresh_panel()

    def action_agents(self) -> None:
        """Choose another agent from the list."""

        def chosen(handle: str | None) -> None:
            if handle:
                self.switch(handle)

        self.push_screen(AgentsScreen(self.session.settings), chosen)

    def action_directory(self) -> None:
        """Browse the people and channels the agent knows."""
        self.push_screen(DirectoryScreen(self.session.settings, self.session.handle))

    def action_trace(self) -> None:
        """Open the trace of the focused reply, else the latest one."""
        focused = self.focused if isinstance(self.focused, Turn) else None
        settled = [t for t in self.transcript.turns() if t.activation_id or t.outcome]
        turn = focused or (settled[-1] if settled else None)
        if turn is None:
            self.transcript.say("[no reply yet to trace]", "notice")
            return
        self.open_trace(turn)

    def on_turn_trace_asked(self, message: Turn.TraceAsked) -> None:
        """A reply asked for its trace."""
        self.open_trace(message.turn)

    def open_trace(self, turn: Turn) -> None:
        """The trace screen for ``turn``'s activation (or its event, while it runs)."""
        self.push_screen(TraceScreen(self.session.settings, turn.activation_id or turn.event_id))

    @work(exclusive=True, group="new")
    async def action_new_page(self) -> None:
        """A new conversation: this one closes (and is remembered), the transcript is cleared."""
        try:
            closed = await self.session.new_conversation()
        except Exception as err:  # Temporal is away: the old one closes when it goes idle
            self.transcript.say(f"[could not close the conversation: {first_line(err)}]", "notice")
            return
        self.transcript.clear()
        said = "the last one closes and is remembered; " if closed else ""
        self.transcript.say(
            f"[a new conversation: {said}the agent keeps what it knows of you]", "notice"
        )
        self.refresh_panel()

    def action_focus_composer(self) -> None:
        """Back to writing."""
        self.composer.focus()
