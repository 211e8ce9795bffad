"""The pinned-notes context source: the agent's own pinned notes, its people's and its channel's.

Only the operator and the agent itself (in a turn nobody else's words reached) can pin, so the
block holds no outsider's text by construction; it is fenced all the same, like every block that
the operator did not write as an instruction, because a note may quote what someone said.
"""

from __future__ import annotations

from activities.context.fencing import PINNED_NOTES
from activities.context.model import ContextBlock, ContextRequest, Trim
from schemas.notes import Note, NoteScope, NoteSource
from store.db import Database
from store.lane import Lane
from store.queries.notes import pinned_for

ORDER = 44
"""After goals (40), before quick facts (45): standing knowledge before the scratchpad."""


class PinnedNotesSource:
    """Pinned live notes about the agent, the people present and this channel."""

    name = "notes"
    required = False

    def __init__(self, db: Database) -> None:
        self._db = db

    async def fetch(self, request: ContextRequest) -> ContextBlock | None:
        """The pinned notes, oldest first: the agent's, then each person's, then the channel's."""
        people = list(dict.fromkeys([request.input.person_id, *request.input.participants]))
        channel = request.input.event.channel.key
        lane = self._db.lane
        notes = await pinned_for(
            lane, agent=request.agent.handle, person_ids=people, channel_key=channel
        )
        if not notes:
            return None
        names = await _names(lane, request.agent.handle, people)
        rank = {NoteScope.AGENT: 0, NoteScope.PERSON: 1, NoteScope.CHANNEL: 2}
        notes.sort(key=lambda n: (rank[n.scope], n.id))
        return ContextBlock(
            source=self.name,
            title="Your pinned notes:",
            items=[_item(n, names) for n in notes],
            order=ORDER,
            trim=Trim.OLDEST_FIRST,
            provenance=PINNED_NOTES,
        )


# On the driver lane, like the notes themselves: a read every prompt with pinned notes repeats.
_NAMES = (
    "SELECT id, display_name FROM people WHERE agent = %(agent)s AND id = ANY(%(ids)s::varchar[])"
)


async def _names(lane: Lane, agent: str, people: list[str]) -> dict[str, str]:
    rows = await lane.rows(_NAMES, {"agent": agent, "ids": people})
    return {row["id"]: row["display_name"] for row in rows}


def _item(note: Note, names: dict[str, str]) -> str:
    # The text comes first and the label after it, without the note's ID: a small model
    # copied "- [01M9...] (about max)" into its reply. A model that supersedes a note reads
    # the IDs with read_notes.
    about = {
        NoteScope.AGENT: "about you",
        NoteScope.PERSON: f"about {names.get(note.scope_id, note.scope_id)}",
        NoteScope.CHANNEL: "about this channel",
    }[note.scope]
    by = "from your operator" if note.source is NoteSource.OPERATOR else "your own"
    body = note.text.replace("\n", "\n  ")  # a note's own lines stay inside its item
    return f"- {body} ({about}, {by})"
