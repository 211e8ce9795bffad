"""The directory browser: the people the agent knows and the channels it talks on.

A person shows their identities, when they last spoke, and the facts the agent holds about
them; a channel opens into its conversations and memories, the recollections (digests) first.
Opening a conversation shows its verbatim dialog, read-only. Everything is read through the
use cases, on demand, as the tree is opened.
"""

from __future__ import annotations

from dataclasses import dataclass

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.screen import Screen
from textual.widgets import Footer, Static, Tree
from textual.widgets.tree import TreeNode

from cli.console_app.dialog_screen import DialogScreen
from cli.console_app.words import first_line
from schemas.contacts import ContactRecord
from schemas.settings import Settings
from usecases import browse, channels, contacts, memory, people


@dataclass(frozen=True)
class Entry:
    """What a tree node stands for."""

    kind: str
    """``person``, ``channel``, ``conversation`` or a section (``people``, ``channels``)."""
    key: str = ""
    contact: ContactRecord | None = None


def person_text(contact: ContactRecord, facts: list[str]) -> str:
    """A person as the detail pane shows them."""
    lines = [contact.name, f"id {contact.person_id}"]
    lines.append(f"last interaction {contact.last_interaction:%Y-%m-%d %H:%M}")
    lines.append("identities:")
    lines += [f"  {i.service}:{i.channel} as {i.speaker_id}" for i in contact.identities]
    lines.append(f"observations ({len(facts)}):")
    lines += [f"  {fact}" for fact in facts] or ["  none yet"]
    return "\n".join(lines)


class DirectoryScreen(Screen[None]):
    """People and channels of one agent; Enter opens a node, Escape goes back."""

    BINDINGS = [Binding("escape", "app.pop_screen", "Back")]

    def __init__(self, settings: Settings, handle: str) -> None:
        super().__init__()
        self.settings = settings
        self.handle = handle
        self.directory: Tree[Entry] = Tree(f"{handle}'s directory", Entry("root"), id="directory")
        self.detail = Static(Text("Choose a person or a channel."), id="detail")
        self.ready = False
        """Whether the people and channels are listed (and the cursor is on the first person)."""

    def compose(self) -> ComposeResult:
        """The tree on the left, what is chosen on the right."""
        with Horizontal():
            yield self.directory
            with VerticalScroll(id="detail-pane"):
                yield self.detail
        yield Footer()

    def on_mount(self) -> None:
        """Read the people and channels."""
        self.directory.root.expand()
        self.directory.focus()
        self.load()

    @work(exclusive=True, group="load")
    async def load(self) -> None:
        """Fill the two sections."""
        found_people = self.directory.root.add("People", Entry("people"), expand=True)
        found_channels = self.directory.root.add("Channels", Entry("channels"), expand=True)
        try:
            known = await contacts.list_contacts(settings=self.settings, agent=self.handle)
            talked = await channels.list_channels(settings=self.settings, agent=self.handle)
        except Exception as err:  # the store is away: say so, keep the screen
            self.detail.update(Text(f"cannot read the directory: {first_line(err)}"))
            return
        people_nodes = [
            found_people.add_leaf(contact.name, Entry("person", contact.person_id, contact))
            for contact in known
        ]
        for channel in talked:
            found_channels.add(channel.key, Entry("channel", channel.key))
        # The cursor starts on the first person (once the tree has placed its lines), so Enter
        # opens them whenever the keys arrive.
        first = people_nodes[0] if people_nodes else found_channels
        self.directory.call_after_refresh(self._place, first)

    def _place(self, node: TreeNode[Entry]) -> None:
        self.directory.move_cursor(node)
        self.detail.update(Text(f"Enter opens {node.label}; the arrows move, Escape goes back."))
        self.ready = True

    def on_tree_node_selected(self, event: Tree.NodeSelected[Entry]) -> None:
        """Show a person, open a channel, or open a conversation's dialog."""
        entry = event.node.data
        if entry is None:
            return
        if entry.kind == "person" and entry.contact is not None:
            self.show_person(entry.contact)
        elif entry.kind == "channel":
            self.open_channel(event.node, entry.key)
        elif entry.kind == "conversation":
            self.app.push_screen(DialogScreen(self.settings, self.handle, entry.key))

    @work(exclusive=True, group="detail")
    async def show_person(self, contact: ContactRecord) -> None:
        """A person's identities, last interaction and observations."""
        try:
            facts = await people.facts(
                settings=self.settings, agent=self.handle, who=contact.person_id
            )
        except Exception as err:
            self.detail.update(Text(f"cannot read {contact.name}'s facts: {first_line(err)}"))
            return
        lines = [f"{f.type}: {f.value}  [{f.trust}]" for f in facts]
        self.detail.update(Text(person_text(contact, lines)))

    @work(exclusive=True, group="detail")
    async def open_channel(self, node: TreeNode[Entry], key: str) -> None:
        """A channel's conversations (as children) and its memories (in the detail pane)."""
        try:
            found = await browse.channel_conversations(
                settings=self.settings, agent=self.handle, channel_key=key
            )
            kept = await memory.list_memories(
                settings=self.settings,
                agent=self.handle,
                channel=key,
                limit=50,
                include_forgotten=False,
            )
        except Exception as err:
            self.detail.update(Text(f"cannot read {key}: {first_line(err)}"))
            return
        if not node.children:
            for talk in found:
                label = f"{talk.opened_at:%Y-%m-%d %H:%M}  {talk.turns} turns  {talk.status}"
                node.add_leaf(label, Entry("conversation", talk.conversation_id))
            node.expand()
        records = sorted((record for record, _ in kept), key=lambda r: -r.level)
        lines = [f"{key}: {len(found)} conversations, {len(records)} memories", ""]
        for record in records:
            what = "recollection" if record.level > 1 else "memory"
            lines.append(f"[{what} L{record.level}] {record.summary}")
        self.detail.update(Text("\n".join(lines)))
