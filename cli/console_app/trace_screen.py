"""A reply's activation trace: the same tree, timings and attributes as ``persyn trace``.

Spans are exported in batches, so a trace asked for right after the reply may not be complete
yet: ``r`` reads it again.
"""

from __future__ import annotations

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import Screen
from textual.widgets import Footer, Static

from cli.console_app.words import first_line
from cli.trace import render
from schemas.settings import Settings
from usecases.traces import activation_trace


class TraceScreen(Screen[None]):
    """One activation's trace tree; ``r`` reads it again, Escape goes back."""

    BINDINGS = [
        Binding("escape", "app.pop_screen", "Back"),
        Binding("r", "reload", "Read again"),
    ]

    def __init__(self, settings: Settings, given: str) -> None:
        super().__init__()
        self.settings = settings
        self.given = given
        self.found = False
        self.body = Static(Text(f"reading the trace of {given}…"), id="trace")

    def compose(self) -> ComposeResult:
        """The tree, scrolling both ways."""
        with VerticalScroll():
            yield self.body
        yield Footer()

    def on_mount(self) -> None:
        """Read the trace."""
        self.action_reload()

    def action_reload(self) -> None:
        """Read the trace again (more spans may have been written)."""
        self.load()

    @work(exclusive=True)
    async def load(self) -> None:
        """Read the spans through the use case and draw them as ``persyn trace`` does."""
        try:
            trace = await activation_trace(settings=self.settings, given=self.given)
        except Exception as err:
            self.body.update(Text(f"cannot read the trace: {first_line(err)}"))
            return
        if trace is None:
            self.body.update(
                Text(
                    f"no spans for {self.given} yet: spans are written in batches "
                    "(press r to look again); elsewhere than the embedded stack set "
                    "PERSYN_TRACING_EXPORTERS=file"
                )
            )
            return
        self.found = True
        self.body.update(Text(render(trace.activation_id, trace.nodes)))
