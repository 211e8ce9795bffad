"""Notes: write, link, read and remove (``schemas.notes``).

Every write to one scope runs under a transaction-level advisory lock on that scope, so the
caps hold when two turns write at once; every ``supersedes`` link runs under one on the agent,
so two links made at once cannot close a cycle that neither saw.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlmodel.ext.asyncio.session import AsyncSession

from schemas.ids import new_ulid
from schemas.notes import (
    TRUSTED_SOURCES,
    UNTRUSTED_REASONS,
    Note,
    NoteError,
    NoteScope,
    NoteSource,
    SimilarNote,
    UntrustedPinError,
    WrittenNote,
    contained,
    similarity,
)
from store.lane import Lane
from store.sql import execute

_SELECT = (
    "SELECT n.*, s.id AS superseded_by FROM notes AS n "
    "LEFT JOIN notes AS s ON s.supersedes = n.id WHERE n.agent = :agent"
)
_LIVE = " AND NOT EXISTS (SELECT 1 FROM notes AS x WHERE x.supersedes = n.id)"
_CHAIN_LIMIT = 10_000


def _note(row: Any) -> Note:
    return Note.model_validate(dict(row._mapping))


@dataclass(frozen=True)
class NoteDraft:
    """A note to write, with what the platform knows of where it came from.

    Attributes:
        scope: Whom it is about.
        scope_id: ``""`` for the agent, a person's ID, a channel's key.
        text: The validated text (``schemas.notes.note_text``).
        pinned: Whether it stands in every prompt its scope reaches.
        source: Where its words came from; set by the platform, never by the writer.
        written_by: Who wrote it, in words.
        activation_id: The turn that wrote it, if a turn did.
        supersedes: A live note of the same scope that it replaces.
    """

    scope: NoteScope
    scope_id: str
    text: str
    pinned: bool
    source: NoteSource
    written_by: str
    activation_id: str | None = None
    supersedes: str | None = None


@dataclass(frozen=True)
class NoteLimits:
    """The caps a write checks (``schemas.notes.NoteSettings``)."""

    max_per_scope: int
    max_pinned_per_scope: int
    similar_threshold: float


def check_pin(source: NoteSource, pinned: bool) -> None:
    """Refuse to pin a note whose words may be someone else's.

    Raises:
        UntrustedPinError: ``pinned`` with an untrusted ``source``.
    """
    if pinned and source not in TRUSTED_SOURCES:
        raise UntrustedPinError(
            f"the note cannot be pinned: {UNTRUSTED_REASONS[source]}; write it unpinned"
        )


async def _lock(session: AsyncSession, key: str) -> None:
    await execute(session, "SELECT pg_advisory_xact_lock(hashtext(:k))", {"k": key})


async def scope_notes(
    session: AsyncSession, *, agent: str, scope: NoteScope, scope_id: str, live_only: bool = True
) -> list[Note]:
    """The notes of one scope, oldest first."""
    sql = f"{_SELECT} AND n.scope = :scope AND n.scope_id = :sid"
    if live_only:
        sql += _LIVE
    rows = await execute(
        session, sql + " ORDER BY n.id", {"agent": agent, "scope": scope.value, "sid": scope_id}
    )
    return [_note(r) for r in rows]


def similar_to(
    text: str, notes: Sequence[Note], threshold: float, limit: int = 3
) -> list[SimilarNote]:
    """The notes among ``notes`` that read like ``text``, best first.

    Those whose words overlap ``text``'s by ``threshold`` (Jaccard) or more, and those that
    already hold most of ``text``'s words (:func:`schemas.notes.contained`).
    """
    found = [
        SimilarNote(
            id=n.id, text=n.text, score=round(similarity(text, n.text), 3), contained=inside
        )
        for n in notes
        if (inside := contained(text, n.text)) or similarity(text, n.text) >= threshold
    ]
    return sorted(found, key=lambda s: (-s.contained, -s.score))[:limit]


async def add_note(
    session: AsyncSession,
    *,
    agent: str,
    draft: NoteDraft,
    limits: NoteLimits,
    at: datetime,
    note_id: str | None = None,
) -> WrittenNote:
    """Write a note; returns it with the live notes of its scope that read like it.

    Does not commit. ``note_id`` makes the write idempotent: a step retried after its worker
    died finds the note it wrote and writes nothing more.

    Raises:
        UntrustedPinError: A pin from an untrusted source.
        NoteError: The scope is full, or holds its most pinned notes, or ``supersedes`` does
            not name a live note of the same scope.
    """
    check_pin(draft.source, draft.pinned)
    if note_id is not None and (found := await get_note(session, agent=agent, note_id=note_id)):
        return WrittenNote(note=found)
    await _lock(session, f"notes:{agent}:{draft.scope.value}:{draft.scope_id}")
    live = await scope_notes(session, agent=agent, scope=draft.scope, scope_id=draft.scope_id)
    replaced = {draft.supersedes} if draft.supersedes else set()
    if len([n for n in live if n.id not in replaced]) >= limits.max_per_scope:
        raise NoteError(
            f"this scope holds {limits.max_per_scope} live notes already: remove or supersede one"
        )
    pinned = [n for n in live if n.pinned and n.id not in replaced]
    if draft.pinned and len(pinned) >= limits.max_pinned_per_scope:
        raise NoteError(
            f"this scope holds {limits.max_pinned_per_scope} pinned notes already: "
            "supersede one, or write this one unpinned"
        )
    others = [n for n in live if n.id not in replaced]
    similar = similar_to(draft.text, others, limits.similar_threshold)
    new_id = note_id or new_ulid()
    await execute(
        session,
        "INSERT INTO notes (id, agent, scope, scope_id, text, pinned, source, written_by, "
        "activation_id, created_at) VALUES (:id, :agent, :scope, :sid, :text, :pinned, "
        ":source, :by, :activation, :at)",
        {
            "id": new_id,
            "agent": agent,
            "scope": draft.scope.value,
            "sid": draft.scope_id,
            "text": draft.text,
            "pinned": draft.pinned,
            "source": draft.source.value,
            "by": draft.written_by,
            "activation": draft.activation_id,
            "at": at,
        },
    )
    if draft.supersedes is not None:
        await link_supersedes(session, agent=agent, newer=new_id, older=draft.supersedes)
    note = await get_note(session, agent=agent, note_id=new_id)
    assert note is not None  # written just above, in this transaction
    return WrittenNote(note=note, similar=similar)


async def get_note(session: AsyncSession, *, agent: str, note_id: str) -> Note | None:
    """The agent's note ``note_id``, or ``None``."""
    rows = await execute(session, f"{_SELECT} AND n.id = :id", {"agent": agent, "id": note_id})
    row = rows.first()
    return _note(row) if row is not None else None


async def _require(session: AsyncSession, agent: str, note_id: str) -> Note:
    note = await get_note(session, agent=agent, note_id=note_id)
    if note is None:
        raise NoteError(f"there is no note {note_id!r}: `persyn notes list` shows their IDs")
    return note


async def link_supersedes(session: AsyncSession, *, agent: str, newer: str, older: str) -> Note:
    """Mark ``older`` as replaced by ``newer``; returns ``older`` as it is now.

    Does not commit. Linking the same pair again changes nothing.

    Raises:
        NoteError: Either note is missing, they are one note, their scopes differ, ``older``
            is already replaced by another note, ``newer`` already replaces another, or the
            link would close a cycle.
    """
    if newer == older:
        raise NoteError("a note cannot supersede itself: name two different notes")
    await _lock(session, f"notes-links:{agent}")
    new, old = await _require(session, agent, newer), await _require(session, agent, older)
    if old.superseded_by == new.id:
        return old
    if (new.scope, new.scope_id) != (old.scope, old.scope_id):
        raise NoteError(
            f"note {new.id} is about {new.scope.value} {new.scope_id!r} and {old.id} about "
            f"{old.scope.value} {old.scope_id!r}: a note can only supersede one of its own scope"
        )
    if old.superseded_by is not None:
        raise NoteError(f"note {old.id} is already superseded by {old.superseded_by}")
    if new.supersedes is not None:
        raise NoteError(f"note {new.id} already supersedes {new.supersedes}")
    if new.id in {n.id for n in await history(session, agent=agent, note_id=old.id)}:
        raise NoteError(
            f"note {old.id} already descends from {new.id}: that link would make a cycle"
        )
    await execute(
        session,
        "UPDATE notes SET supersedes = :old WHERE id = :new AND agent = :agent",
        {"old": old.id, "new": new.id, "agent": agent},
    )
    updated = await get_note(session, agent=agent, note_id=old.id)
    assert updated is not None
    return updated


async def history(session: AsyncSession, *, agent: str, note_id: str) -> list[Note]:
    """The note and every note it replaced, newest first."""
    chain: list[Note] = []
    current: str | None = note_id
    seen: set[str] = set()
    while current is not None and current not in seen and len(chain) < _CHAIN_LIMIT:
        seen.add(current)
        note = await get_note(session, agent=agent, note_id=current)
        if note is None:
            break
        chain.append(note)
        current = note.supersedes
    return chain


async def list_notes(
    session: AsyncSession,
    *,
    agent: str,
    scope: NoteScope | None = None,
    scope_id: str | None = None,
    live_only: bool = True,
) -> list[Note]:
    """The agent's notes, by scope then oldest first; ``scope``/``scope_id`` narrow them."""
    sql, params = _SELECT, {"agent": agent}
    if scope is not None:
        sql, params = sql + " AND n.scope = :scope", {**params, "scope": scope.value}
    if scope_id is not None:
        sql, params = sql + " AND n.scope_id = :sid", {**params, "sid": scope_id}
    if live_only:
        sql += _LIVE
    rows = await execute(session, sql + " ORDER BY n.scope, n.scope_id, n.id", params)
    return [_note(r) for r in rows]


# On the driver lane: every prompt reads its pinned notes, an autocommit read of one statement.
_PINNED_FOR = """
    SELECT n.*, s.id AS superseded_by
      FROM notes AS n
      LEFT JOIN notes AS s ON s.supersedes = n.id
     WHERE n.agent = %(agent)s AND n.pinned
       AND NOT EXISTS (SELECT 1 FROM notes AS x WHERE x.supersedes = n.id)
       AND ((n.scope = 'agent')
            OR (n.scope = 'person' AND n.scope_id = ANY(%(people)s::text[]))
            OR (n.scope = 'channel' AND n.scope_id = %(channel)s))
     ORDER BY n.id
"""


async def pinned_for(
    lane: Lane, *, agent: str, person_ids: Sequence[str], channel_key: str
) -> list[Note]:
    """The live pinned notes a turn's prompt carries: the agent's, its people's, its channel's."""
    rows = await lane.rows(
        _PINNED_FOR, {"agent": agent, "people": list(person_ids), "channel": channel_key}
    )
    return [Note.model_validate(row) for row in rows]


async def remove_note(session: AsyncSession, *, agent: str, note_id: str) -> Note:
    """Delete a note; returns it. Does not commit.

    A note in the middle of a chain is cut out of it: the note that replaced it now replaces
    the one it replaced, so removing a link never brings an old note back to life.

    Raises:
        NoteError: There is no such note.
    """
    await _lock(session, f"notes-links:{agent}")
    note = await _require(session, agent, note_id)
    params = {"agent": agent, "id": note.id, "older": note.supersedes}
    await execute(session, "UPDATE notes SET supersedes = NULL WHERE id = :id", params)
    await execute(
        session,
        "UPDATE notes SET supersedes = :older WHERE supersedes = :id AND agent = :agent",
        params,
    )
    await execute(session, "DELETE FROM notes WHERE id = :id AND agent = :agent", params)
    return note
