"""Choosing another agent to talk with: a list of every agent; Enter picks one."""

from __future__ import annotations

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.screen import ModalScreen
from textual.widgets import Label, ListItem, ListView

from cli.console_app.words import first_line
from schemas.settings import Settings
from usecases import agents


class AgentItem(ListItem):
    """One agent in the list."""

    def __init__(self, handle: str, name: str) -> None:
        super().__init__(Label(Text(f"{name} ({handle})")))
        self.handle = handle


class AgentsScreen(ModalScreen[str | None]):
    """Every agent; dismissed with the chosen handle, or ``None`` on Escape."""

    BINDINGS = [Binding("escape", "dismiss(None)", "Back")]

    def __init__(self, settings: Settings) -> None:
        super().__init__()
        self.settings = settings
        self.choices = ListView(id="agents")

    def compose(self) -> ComposeResult:
        """The list."""
        yield self.choices

    def on_mount(self) -> None:
        """Read the agents."""
        self.load()

    @work(exclusive=True)
    async def load(self) -> None:
        """List them through the use case."""
        try:
            found = await agents.list_agents(settings=self.settings)
        except Exception as err:
            await self.choices.append(ListItem(Label(Text(f"cannot list: {first_line(err)}"))))
            return
        for agent in found:
            await self.choices.append(AgentItem(agent.handle, agent.name))
        self.choices.focus()

    def on_list_view_selected(self, event: ListView.Selected) -> None:
        """Pick the agent under the cursor."""
        if isinstance(event.item, AgentItem):
            self.dismiss(event.item.handle)
