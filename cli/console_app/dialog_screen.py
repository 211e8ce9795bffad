"""One conversation's verbatim dialog, read-only, as the store keeps it."""

from __future__ import annotations

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import Screen
from textual.widgets import Footer, Static

from cli.console_app.words import first_line
from schemas.dialog import DialogTurn
from schemas.settings import Settings
from usecases import browse


def dialog_text(turns: list[DialogTurn]) -> str:
    """The dialog, one utterance after another."""
    if not turns:
        return "(no turns)"
    return "\n\n".join(f"{t.at:%Y-%m-%d %H:%M}  {t.speaker_name}: {t.text}" for t in turns)


class DialogScreen(Screen[None]):
    """A conversation's dialog; Escape goes back."""

    BINDINGS = [Binding("escape", "app.pop_screen", "Back")]

    def __init__(self, settings: Settings, handle: str, conversation_id: str) -> None:
        super().__init__()
        self.settings = settings
        self.handle = handle
        self.conversation_id = conversation_id
        self.body = Static(Text(f"reading conversation {conversation_id}…"), id="dialog")

    def compose(self) -> ComposeResult:
        """The dialog, scrolling."""
        with VerticalScroll():
            yield self.body
        yield Footer()

    def on_mount(self) -> None:
        """Read the dialog."""
        self.load()

    @work(exclusive=True)
    async def load(self) -> None:
        """Read the conversation's turns through the use case."""
        try:
            turns = await browse.conversation_dialog(
                settings=self.settings, agent=self.handle, conversation_id=self.conversation_id
            )
        except Exception as err:
            self.body.update(Text(f"cannot read the conversation: {first_line(err)}"))
            return
        head = f"conversation {self.conversation_id} (read-only)\n\n"
        self.body.update(Text(head + dialog_text(turns)))
