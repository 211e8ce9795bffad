"""Notes tools: the agent writes durable notes, pins some in its context, and reads them back.

The arguments name the text, whom it is about, whether to pin it and what it replaces; never
where it came from. The platform decides that from the turn (``activities.notes.trust``), and a
pin from an untrusted source is refused with the reason, so the model can write it unpinned.
"""

from __future__ import annotations

from pydantic import BaseModel, Field

from activities.notes.trust import readable, source_of_write, writable
from activities.tools.builtin.deps import ToolDeps
from activities.tools.builtin.facts import SELF, subject_of
from activities.tools.registry import Tool, ToolError, ToolInput, ToolRun
from schemas.notes import Note, NoteError, NoteScope, SimilarNote, note_text, similarity
from store.queries.notes import NoteDraft, NoteLimits, add_note, list_notes, scope_notes

CHANNEL = "channel"
_OUT_OF_REACH = (
    "in this conversation you can {verb} notes only about the people in it and this channel"
    " (and read your own): ask your operator for the rest"
)
_ABOUT = (
    "Whom the note is about: 'self' for yourself, 'channel' for the channel you are on now, "
    "or a contact's name or ID."
)


async def scope_of(deps: ToolDeps, call: ToolRun, about: str) -> tuple[NoteScope, str]:
    """The scope ``about`` names in this turn (not yet checked against what the turn reaches).

    Raises:
        ToolError: It names no contact, or several.
    """
    if about.strip().lower() in {CHANNEL, "this channel", "here"}:
        return NoteScope.CHANNEL, call.context.channel.key
    subject = await subject_of(deps, call.context.agent, about)
    if subject == SELF:
        return NoteScope.AGENT, ""
    return NoteScope.PERSON, subject


class NoteOut(BaseModel):
    """A note as the agent reads it."""

    id: str
    text: str
    pinned: bool
    source: str = Field(description="Where its words came from, as the platform saw it.")
    supersedes: str | None = None


def _out(note: Note) -> NoteOut:
    return NoteOut(
        id=note.id,
        text=note.text,
        pinned=note.pinned,
        source=note.source.value,
        supersedes=note.supersedes,
    )


class WriteNoteInput(ToolInput):
    """Input of ``write_note``."""

    text: str = Field(description="The note, in your own words.")
    about: str = Field(default=SELF, description=_ABOUT)
    pinned: bool = Field(
        default=False,
        description="Keep it in front of you in every conversation it concerns. Refused when "
        "the words may be someone else's (an unvouched speaker, a tool result).",
    )
    supersedes: str | None = Field(
        default=None,
        description="The ID of a note about the same subject this replaces (read_notes shows "
        "the IDs).",
    )


class WrittenNoteOut(BaseModel):
    """What ``write_note`` returns."""

    note: NoteOut
    similar: list[SimilarNote] = Field(
        default_factory=list,
        description="Notes you already have that read like this one: supersede one instead of "
        "keeping both, if this replaces it.",
    )


class WriteNote(Tool):
    """Write a durable note."""

    name = "write_note"
    description = (
        "Keep a durable note about yourself, a person or this channel; pinned notes stay in "
        "your context. Notes are never edited: write a new one that supersedes the old."
    )
    input_model = WriteNoteInput
    output_model = WrittenNoteOut

    def __init__(self, deps: ToolDeps) -> None:
        self._deps = deps

    async def run(self, call: ToolRun, args: WriteNoteInput) -> WrittenNoteOut:
        """Store it, with the source the platform sees."""
        settings = self._deps.settings.notes
        try:
            text = note_text(args.text, max_bytes=settings.max_bytes)
        except NoteError as err:
            raise ToolError(str(err)) from None
        scope, scope_id = await scope_of(self._deps, call, args.about)
        context = call.context
        if not writable(context, scope, scope_id):
            raise ToolError(_OUT_OF_REACH.format(verb="write"))
        limits = NoteLimits(
            settings.max_per_scope, settings.max_pinned_per_scope, settings.similar_threshold
        )
        async with self._deps.db.session() as session:
            source = await source_of_write(session, context=context, call_id=call.call_id)
            draft = NoteDraft(
                scope=scope,
                scope_id=scope_id,
                text=text,
                pinned=args.pinned,
                source=source,
                written_by=f"the agent, in a {context.trigger.value} turn on {context.channel.key}",
                activation_id=context.activation_id,
                supersedes=args.supersedes,
            )
            try:
                written = await add_note(
                    session,
                    agent=context.agent,
                    draft=draft,
                    limits=limits,
                    at=call.now,
                    note_id=call.call_id or None,
                )
            except NoteError as err:
                raise ToolError(str(err)) from None
            await session.commit()
        return WrittenNoteOut(note=_out(written.note), similar=written.similar)


class ReadNotesInput(ToolInput):
    """Input of ``read_notes``."""

    about: str | None = Field(default=None, description=f"{_ABOUT} Omit for all of them.")
    query: str | None = Field(default=None, description="Words to rank them by.")


class NoteList(BaseModel):
    """Notes, best match first when a query was given."""

    notes: list[NoteOut]


READ_LIMIT = 30
"""Notes ``read_notes`` returns at most."""


class ReadNotes(Tool):
    """Read durable notes, pinned or not."""

    name = "read_notes"
    description = "Read your durable notes (pinned and unpinned), about one subject or all."
    input_model = ReadNotesInput
    output_model = NoteList

    def __init__(self, deps: ToolDeps) -> None:
        self._deps = deps

    async def run(self, call: ToolRun, args: ReadNotesInput) -> NoteList:
        """Read them, live ones only."""
        agent = call.context.agent
        async with self._deps.db.session() as session:
            if args.about is None:
                every = await list_notes(session, agent=agent)
                notes = [n for n in every if readable(call.context, n.scope, n.scope_id)]
            else:
                scope, scope_id = await scope_of(self._deps, call, args.about)
                if not readable(call.context, scope, scope_id):
                    raise ToolError(_OUT_OF_REACH.format(verb="read"))
                notes = await scope_notes(session, agent=agent, scope=scope, scope_id=scope_id)
        if args.query:
            query = args.query
            notes = sorted(notes, key=lambda n: -similarity(query, n.text))
        return NoteList(notes=[_out(n) for n in notes[:READ_LIMIT]])


def note_tools(deps: ToolDeps) -> list[Tool]:
    """The notes tools."""
    return [WriteNote(deps), ReadNotes(deps)]
