"""``persyn notes list|show|add|supersede|remove|import``: durable notes an agent keeps.

A note is about the agent (no scope option), a person (``--person``) or one of its channels
(``--channel``). The operator's notes are pinned unless told otherwise: a pinned note stands in
every prompt its scope reaches. A note is replaced through ``supersede``, so its history stays
readable; imported notes are never pinned.
"""

from __future__ import annotations

import json
from datetime import UTC
from pathlib import Path
from typing import Annotated

import typer

from cli.common import UserError, excerpt, friendly_errors, run
from cli.contacts import AgentOpt, JsonOpt
from schemas.notes import Note, WrittenNote
from schemas.settings import get_settings
from usecases import notes, notes_import

app = typer.Typer(
    help="Durable notes about the agent, a person or a channel: list, show, add, supersede, "
    "remove, import.",
    no_args_is_help=True,
)
PersonOpt = Annotated[
    str | None,
    typer.Option("--person", help="About this person: their ID, name or a speaker ID."),
]
ChannelOpt = Annotated[
    str | None,
    typer.Option("--channel", help="About this channel of the agent's, e.g. terminal:tty."),
]
NoteArg = Annotated[str, typer.Argument(help="The note's ID (`persyn notes list` shows them).")]
EXCERPT = 100
"""How much of a note's first line a listing shows."""


def _target(person: str | None, channel: str | None) -> notes.Target:
    if person is not None and channel is not None:
        raise UserError("give --person or --channel, not both: a note has one scope")
    return notes.Target(person=person, channel=channel)


def _excerpt(text: str, limit: int = EXCERPT) -> str:
    return excerpt(text, limit)


def _line(note: Note, about: str) -> str:
    pin = "pinned" if note.pinned else "unpinned"
    line = (
        f"{note.id}  {pin:<8}  {about}  {_excerpt(note.text)}  "
        f"[{note.source.value}, {note.created_at:%Y-%m-%d}]"
    )
    return line if note.live else f"{line}  (superseded by {note.superseded_by})"


def _print_written(written: WrittenNote, agent: str, as_json: bool) -> None:
    if as_json:
        typer.echo(written.model_dump_json(indent=2))
        return
    note = written.note
    replaces = f", supersedes {note.supersedes}" if note.supersedes else ""
    typer.echo(f"added {note.id} ({'pinned' if note.pinned else 'unpinned'}{replaces})")
    for similar in written.similar:
        why = "holds most of its words" if similar.contained else f"score {similar.score:.2f}"
        typer.echo(f"similar: {similar.id} ({why}) {_excerpt(similar.text)}")
    if written.similar:
        old = written.similar[0].id if len(written.similar) == 1 else "OLD_ID"
        typer.echo(f"(if it replaces one: persyn notes supersede -a {agent} {old} --by {note.id})")


@app.command("list")
@friendly_errors
def list_(
    agent: AgentOpt,
    person: PersonOpt = None,
    channel: ChannelOpt = None,
    all_: Annotated[bool, typer.Option("--all", help="Superseded notes too.")] = False,
    as_json: JsonOpt = False,
) -> None:
    """The agent's live notes (of one scope with --person or --channel), by scope, oldest first."""
    named = person is not None or channel is not None
    target = _target(person, channel) if named else None
    found = run(
        notes.list_notes(settings=get_settings(), agent=agent, target=target, live_only=not all_)
    )
    if as_json:
        rows = [{**n.note.model_dump(mode="json"), "about": n.about} for n in found]
        typer.echo(json.dumps(rows, indent=2))
    elif not found:
        typer.echo("no notes")
    for labelled in [] if as_json else found:
        typer.echo(_line(labelled.note, labelled.about))


@app.command()
@friendly_errors
def show(agent: AgentOpt, note_id: NoteArg, as_json: JsonOpt = False) -> None:
    """One note in full: its text, scope, source, links and the notes it replaced."""
    found = run(notes.show_note(settings=get_settings(), agent=agent, note_id=note_id))
    if as_json:
        typer.echo(found.model_dump_json(indent=2))
        return
    note = found.note
    typer.echo(f"note:          {note.id}")
    typer.echo(f"about:         {found.about}")
    typer.echo(f"pinned:        {'yes' if note.pinned else 'no'}")
    typer.echo(f"source:        {note.source.value}")
    typer.echo(f"written by:    {note.written_by}")
    typer.echo(f"created:       {note.created_at.astimezone(UTC):%Y-%m-%d %H:%M} UTC")
    typer.echo(f"supersedes:    {note.supersedes or '-'}")
    typer.echo(f"superseded by: {note.superseded_by or '- (live)'}")
    for older in found.history[1:]:
        typer.echo(
            f"replaced:      {older.id}  {older.created_at:%Y-%m-%d}  {_excerpt(older.text)}"
        )
    typer.echo("")
    typer.echo(note.text)


@app.command()
@friendly_errors
def add(
    agent: AgentOpt,
    text: Annotated[str, typer.Argument(help="The note's text.")],
    person: PersonOpt = None,
    channel: ChannelOpt = None,
    pin: Annotated[
        bool, typer.Option("--pin/--no-pin", help="Stand in every prompt its scope reaches.")
    ] = True,
    supersedes: Annotated[
        str | None, typer.Option("--supersedes", help="The ID of a live note this replaces.")
    ] = None,
    as_json: JsonOpt = False,
) -> None:
    """Write a note as the operator; notes that read like it are listed after its ID."""
    written = run(
        notes.add_note(
            settings=get_settings(),
            agent=agent,
            target=_target(person, channel),
            text=text,
            pinned=pin,
            supersedes=supersedes,
        )
    )
    _print_written(written, agent, as_json)


@app.command()
@friendly_errors
def supersede(
    agent: AgentOpt,
    old_id: NoteArg,
    text: Annotated[
        str | None, typer.Argument(help="The new note's text (in the old one's scope).")
    ] = None,
    by: Annotated[
        str | None, typer.Option("--by", help="An existing note that replaces it, instead.")
    ] = None,
    no_pin: Annotated[
        bool, typer.Option("--no-pin", help="Write the new note unpinned (default: as the old).")
    ] = False,
    as_json: JsonOpt = False,
) -> None:
    """Replace a note: with a new one from TEXT, or by linking an existing one (--by)."""
    if (text is None) == (by is None):
        raise UserError("give the new note's TEXT or --by NOTE_ID, one of them")
    settings = get_settings()
    if text is not None:
        writing = notes.supersede_with_text(
            settings=settings,
            agent=agent,
            old_id=old_id,
            text=text,
            pinned=False if no_pin else None,
        )
        _print_written(run(writing), agent, as_json)
        return
    if no_pin:
        raise UserError("--no-pin goes with TEXT: --by links a note as it is")
    old = run(notes.supersede_by(settings=settings, agent=agent, old_id=old_id, new_id=str(by)))
    if as_json:
        typer.echo(old.model_dump_json(indent=2))
    else:
        typer.echo(f"{old.superseded_by} now supersedes {old.id}")


@app.command()
@friendly_errors
def remove(agent: AgentOpt, note_id: NoteArg) -> None:
    """Delete a note; the note that replaced it then replaces the one it replaced."""
    removed = run(notes.remove_note(settings=get_settings(), agent=agent, note_id=note_id))
    typer.echo(f"removed {removed.id}")


def _read(path: Path) -> list[str]:
    try:
        content = path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise UserError(f"{path.name} is not UTF-8 text: save it as UTF-8") from None
    except OSError as err:
        raise UserError(f"cannot read {path.name}: {err.strerror or err}") from None
    # Lines end at "\n" only: JSON text may hold other separators Python would split on.
    return content.split("\n")


@app.command("import")
@friendly_errors
def import_(
    agent: AgentOpt,
    file: Annotated[
        Path,
        typer.Argument(
            help='JSONL, one note a line: {"text": "…", "scope": "agent"|"person"|"channel", '
            '"who": person (scope person), "channel": key (scope channel), "pinned": false}.'
        ),
    ],
    as_json: JsonOpt = False,
) -> None:
    """Import notes from JSONL, all or none; each stored unpinned, from source `imported`."""
    done = run(
        notes_import.import_notes(
            settings=get_settings(), agent=agent, file_name=file.name, lines=_read(file)
        )
    )
    if as_json:
        typer.echo(json.dumps({"imported": len(done.ids), "ids": done.ids}, indent=2))
    else:
        typer.echo(f"imported {len(done.ids)} note{'s' if len(done.ids) != 1 else ''}")
