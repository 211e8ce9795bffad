"""Notes from the operator's side: list, show, add, supersede and remove them.

A note is about the agent, one person (named by ID, name or speaker ID) or one of the agent's
channels (named by its key, ``service:channel``). The operator is a trusted source, so its
notes may be pinned; imported notes never are (``usecases.notes_import``). Each write runs in
one transaction: a refused request stores nothing.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from pydantic import BaseModel
from sqlmodel import col, select
from sqlmodel.ext.asyncio.session import AsyncSession

from schemas.autonomy import SELF_SERVICE
from schemas.contacts import ContactError, channel_key
from schemas.ids import check_ulid
from schemas.notes import (
    Note,
    NoteError,
    NoteScope,
    NoteSource,
    WrittenNote,
    note_text,
)
from schemas.settings import Settings
from store.queries import directory
from store.queries import notes as store
from store.queries.notes import NoteDraft, NoteLimits
from store.tables import Channel, Person
from store.tables.columns import utcnow
from usecases.directory import in_agent

OPERATOR = "operator"
"""``written_by`` of every note the operator adds."""


@dataclass(frozen=True)
class Target:
    """Whom notes are about, as the operator named them: a person, a channel, or the agent."""

    person: str | None = None
    channel: str | None = None

    def __post_init__(self) -> None:
        if self.person is not None and self.channel is not None:
            raise NoteError("a note is about a person or a channel, not both: give one of them")


@dataclass(frozen=True)
class Scope:
    """A resolved scope: ``scope_id`` is ``""`` for the agent, a person's ID, a channel key."""

    scope: NoteScope
    scope_id: str


class LabelledNote(BaseModel):
    """A note with its scope in words (``person Una``, ``channel terminal:tty``, ``agent``)."""

    note: Note
    about: str


class NoteDetail(LabelledNote):
    """A note, its scope in words, and the notes it replaced, newest first (itself first)."""

    history: list[Note]


def limits(settings: Settings) -> NoteLimits:
    """The caps a write checks, from ``settings.notes``."""
    found = settings.notes
    return NoteLimits(
        max_per_scope=found.max_per_scope,
        max_pinned_per_scope=found.max_pinned_per_scope,
        similar_threshold=found.similar_threshold,
    )


async def _channel(session: AsyncSession, agent: str, key: str) -> str:
    ref = channel_key(key)
    found = (
        await session.exec(
            select(Channel.key).where(
                Channel.agent == agent, Channel.key == ref.key, Channel.service != SELF_SERVICE
            )
        )
    ).first()
    if found is None:
        raise ContactError(f"{agent} has no channel {ref.key[:80]!r}: see persyn channels list")
    return found


async def resolve(session: AsyncSession, agent: str, target: Target) -> Scope:
    """The scope ``target`` names.

    Raises:
        ContactError: No such person or channel, or several people match.
    """
    if target.person is not None:
        person = await directory.find_person(session, agent=agent, who=target.person)
        return Scope(NoteScope.PERSON, person.id)
    if target.channel is not None:
        return Scope(NoteScope.CHANNEL, await _channel(session, agent, target.channel))
    return Scope(NoteScope.AGENT, "")


async def _labels(session: AsyncSession, agent: str, notes: Sequence[Note]) -> list[LabelledNote]:
    ids = {n.scope_id for n in notes if n.scope is NoteScope.PERSON}
    rows = await session.exec(select(Person).where(Person.agent == agent, col(Person.id).in_(ids)))
    names = {p.id: p.display_name for p in rows}

    def about(note: Note) -> str:
        if note.scope is NoteScope.AGENT:
            return "agent"
        if note.scope is NoteScope.PERSON:
            return f"person {names.get(note.scope_id, note.scope_id)}"
        return f"channel {note.scope_id}"

    return [LabelledNote(note=n, about=about(n)) for n in notes]


async def _require(session: AsyncSession, agent: str, note_id: str) -> Note:
    found = check_ulid(note_id, what="note")
    note = await store.get_note(session, agent=agent, note_id=found)
    if note is None:
        raise NoteError(f"there is no note {found}: `persyn notes list` shows their IDs")
    return note


async def list_notes(
    *, settings: Settings, agent: str, target: Target | None, live_only: bool = True
) -> list[LabelledNote]:
    """The agent's notes (``target`` ``None``: of every scope), by scope then oldest first.

    Raises:
        UnknownAgentError: no such agent.
        ContactError: ``target`` names no person or channel of the agent's.
    """

    async def act(session: AsyncSession) -> list[LabelledNote]:
        scope = await resolve(session, agent, target) if target is not None else None
        found = await store.list_notes(
            session,
            agent=agent,
            scope=scope.scope if scope else None,
            scope_id=scope.scope_id if scope else None,
            live_only=live_only,
        )
        return await _labels(session, agent, found)

    return await in_agent(settings, agent, act)


async def show_note(*, settings: Settings, agent: str, note_id: str) -> NoteDetail:
    """One note with its scope in words and its history.

    Raises:
        UnknownAgentError: no such agent.
        NoteError: no such note.
    """

    async def act(session: AsyncSession) -> NoteDetail:
        note = await _require(session, agent, note_id)
        [labelled] = await _labels(session, agent, [note])
        chain = await store.history(session, agent=agent, note_id=note.id)
        return NoteDetail(note=note, about=labelled.about, history=chain)

    return await in_agent(settings, agent, act)


async def add_note(
    *,
    settings: Settings,
    agent: str,
    target: Target,
    text: str,
    pinned: bool,
    supersedes: str | None = None,
) -> WrittenNote:
    """Write the operator's note; returns it with the live notes of its scope that read like it.

    Raises:
        UnknownAgentError: no such agent.
        ContactError: ``target`` names no person or channel of the agent's.
        NoteError: the text is empty, too long or holds a control character; the scope is
            full; ``supersedes`` is not a live note of the same scope.
    """
    body = note_text(text, max_bytes=settings.notes.max_bytes)

    async def act(session: AsyncSession) -> WrittenNote:
        scope = await resolve(session, agent, target)
        replaced = (await _require(session, agent, supersedes)).id if supersedes else None
        draft = NoteDraft(
            scope=scope.scope,
            scope_id=scope.scope_id,
            text=body,
            pinned=pinned,
            source=NoteSource.OPERATOR,
            written_by=OPERATOR,
            supersedes=replaced,
        )
        written = await store.add_note(
            session, agent=agent, draft=draft, limits=limits(settings), at=utcnow()
        )
        await session.commit()
        return written

    return await in_agent(settings, agent, act)


async def supersede_with_text(
    *, settings: Settings, agent: str, old_id: str, text: str, pinned: bool | None
) -> WrittenNote:
    """Write a note in ``old_id``'s scope that replaces it; ``pinned`` ``None``: as the old one.

    Raises:
        UnknownAgentError: no such agent.
        NoteError: no such note, it is already replaced, or the text or the scope refuses.
    """
    body = note_text(text, max_bytes=settings.notes.max_bytes)

    async def act(session: AsyncSession) -> WrittenNote:
        old = await _require(session, agent, old_id)
        draft = NoteDraft(
            scope=old.scope,
            scope_id=old.scope_id,
            text=body,
            pinned=old.pinned if pinned is None else pinned,
            source=NoteSource.OPERATOR,
            written_by=OPERATOR,
            supersedes=old.id,
        )
        written = await store.add_note(
            session, agent=agent, draft=draft, limits=limits(settings), at=utcnow()
        )
        await session.commit()
        return written

    return await in_agent(settings, agent, act)


async def supersede_by(*, settings: Settings, agent: str, old_id: str, new_id: str) -> Note:
    """Mark the existing note ``new_id`` as replacing ``old_id``; returns the old note now.

    Raises:
        UnknownAgentError: no such agent.
        NoteError: either note is missing, their scopes differ, ``old_id`` is already
            replaced, ``new_id`` already replaces another, or the link would make a cycle.
    """

    async def act(session: AsyncSession) -> Note:
        old = await _require(session, agent, old_id)
        new = await _require(session, agent, new_id)
        found = await store.link_supersedes(session, agent=agent, newer=new.id, older=old.id)
        await session.commit()
        return found

    return await in_agent(settings, agent, act)


async def remove_note(*, settings: Settings, agent: str, note_id: str) -> Note:
    """Delete a note, closing its chain over the gap; returns it.

    Raises:
        UnknownAgentError: no such agent.
        NoteError: no such note.
    """

    async def act(session: AsyncSession) -> Note:
        note = await _require(session, agent, note_id)
        removed = await store.remove_note(session, agent=agent, note_id=note.id)
        await session.commit()
        return removed

    return await in_agent(settings, agent, act)
