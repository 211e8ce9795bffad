"""``persyn notes import``: notes brought in from a JSONL file, never pinned, all or none.

Every line is checked before anything is stored (JSON, fields, pin, text, whom it is about),
then every scope is resolved, then every note is written in one transaction. A refusal names
its line; an imported note's source is ``imported``, so it can never be pinned.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass

from pydantic import BaseModel
from sqlmodel.ext.asyncio.session import AsyncSession

from schemas.contacts import ContactError
from schemas.notes import NoteError, NoteScope, NoteSource, note_text
from schemas.settings import Settings
from schemas.text import InvalidTextError
from store.queries import notes as store
from store.queries.notes import NoteDraft
from store.tables.columns import utcnow
from usecases.directory import in_agent
from usecases.notes import Target, limits, resolve

IMPORT_FIELDS = ("text", "scope", "who", "channel", "pinned")
"""The fields a line of an import file may hold."""


class Imported(BaseModel):
    """What an import stored."""

    ids: list[str]


@dataclass(frozen=True)
class ImportLine:
    """One checked line of an import file: its number, the note's text, whom it is about."""

    number: int
    text: str
    target: Target


@contextmanager
def _at_line(number: int) -> Iterator[None]:
    """Prefix a refusal with the line it is about, keeping its type."""
    try:
        yield
    except (NoteError, ContactError, InvalidTextError) as err:
        raise type(err)(f"line {number}: {err}") from None


def _parse_line(number: int, raw: str, max_bytes: int) -> ImportLine:
    with _at_line(number):
        try:
            entry = json.loads(raw)
        except json.JSONDecodeError as err:
            raise NoteError(f"not JSON ({err.msg}): write one JSON object a line") from None
        if not isinstance(entry, dict):
            raise NoteError("not a JSON object: write one JSON object a line")
        unknown = sorted(set(entry) - set(IMPORT_FIELDS))
        if unknown:
            raise NoteError(
                f"unknown field {', '.join(repr(k[:40]) for k in unknown)}: "
                f"a line takes {', '.join(IMPORT_FIELDS)}"
            )
        pinned = entry.get("pinned", False)
        if not isinstance(pinned, bool):
            raise NoteError("'pinned' must be true or false")
        store.check_pin(NoteSource.IMPORTED, pinned)
        text = entry.get("text")
        if not isinstance(text, str):
            raise NoteError("'text' is missing or not a string: give the note's text")
        return ImportLine(number, note_text(text, max_bytes=max_bytes), _import_target(entry))


_NAMED_BY = {NoteScope.PERSON: "who", NoteScope.CHANNEL: "channel"}
"""The field of an import line that names a scope's person or channel."""


def _import_target(entry: dict[str, object]) -> Target:
    value = entry.get("scope", NoteScope.AGENT.value)
    if not isinstance(value, str) or value not in set(NoteScope):
        raise NoteError("'scope' must be agent, person or channel")
    scope = NoteScope(value)
    for named, field in _NAMED_BY.items():
        if field in entry and named is not scope:
            raise NoteError(f"{field!r} goes with scope {named.value} only")
    wanted = _NAMED_BY.get(scope)
    if wanted is None:
        return Target()
    name = entry.get(wanted)
    if not isinstance(name, str):
        raise NoteError(f"scope {scope.value} needs {wanted!r}: a string naming the {scope.value}")
    return Target(person=name) if scope is NoteScope.PERSON else Target(channel=name)


def parse_import(lines: Sequence[str], max_bytes: int) -> list[ImportLine]:
    """Every non-blank line of an import file, checked.

    Raises:
        NoteError: A line is not a JSON object, has an unknown field, or its text is invalid.
        UntrustedPinError: A line asks to be pinned.
    """
    parsed = [
        _parse_line(number, raw, max_bytes)
        for number, raw in enumerate(lines, start=1)
        if raw.strip()
    ]
    if not parsed:
        raise NoteError("the file holds no notes: write one JSON object a line")
    return parsed


async def import_notes(
    *, settings: Settings, agent: str, file_name: str, lines: Sequence[str]
) -> Imported:
    """Store every note of an import file, unpinned, from source ``imported``; all or none.

    Raises:
        UnknownAgentError: no such agent.
        UntrustedPinError: a line asks to be pinned (nothing is stored).
        NoteError, ContactError: a line is refused (nothing is stored); the message names it.
    """
    parsed = parse_import(lines, settings.notes.max_bytes)
    shown = "".join(c if c.isprintable() else "?" for c in file_name)[:200]

    async def act(session: AsyncSession) -> Imported:
        scopes = []
        for line in parsed:
            with _at_line(line.number):
                scopes.append(await resolve(session, agent, line.target))
        ids: list[str] = []
        for line, scope in zip(parsed, scopes, strict=True):
            draft = NoteDraft(
                scope=scope.scope,
                scope_id=scope.scope_id,
                text=line.text,
                pinned=False,
                source=NoteSource.IMPORTED,
                written_by=f"imported from {shown} line {line.number}",
            )
            with _at_line(line.number):
                written = await store.add_note(
                    session, agent=agent, draft=draft, limits=limits(settings), at=utcnow()
                )
            ids.append(written.note.id)
        await session.commit()
        return Imported(ids=ids)

    return await in_agent(settings, agent, act)
