"""An import, start to end: parse and validate the whole file, resolve speakers, embed, store.

Nothing is written unless the whole file is valid. Each conversation is then stored in its own
transaction, so an interruption (a crash, a lost database) leaves complete conversations only,
and running the import again finishes it without duplicates.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from datetime import datetime
from pathlib import Path

from sqlalchemy import text

from schemas.events import ChannelRef, Speaker
from schemas.imports import ImportFormat, ImportReport
from schemas.memory_search import turn_embedding_text
from store.db import Database
from store.embedding import EmbeddingUnavailableError, TurnEncoder
from store.importer.ids import conversation_id, turn_id
from store.importer.jsonl import parse_jsonl
from store.importer.locomo import parse_locomo
from store.importer.model import ImportInputError, SourceConversation, check_conversations
from store.queries.imports import TurnRecord, existing_turns, write_conversation
from store.queries.people import resolve_speaker

AfterConversation = Callable[[str], Awaitable[None]]
"""Called with each conversation that gained turns, once it is committed (e.g. to consolidate)."""


def detect_format(path: Path) -> ImportFormat:
    """LoCoMo files are one JSON list; JSONL files start with an object."""
    with path.open("rb") as handle:
        head = handle.read(4096).lstrip(b"\xef\xbb\xbf \t\r\n")
    return ImportFormat.LOCOMO if head.startswith(b"[") else ImportFormat.JSONL


def parse(path: Path, fmt: ImportFormat) -> tuple[ImportFormat, list[SourceConversation]]:
    """Read and validate the file (blocking: call it off the event loop).

    Raises:
        ImportInputError: The file is missing, unreadable or malformed.
    """
    if not path.is_file():
        raise ImportInputError(f"{path} is not a file")
    if fmt is ImportFormat.AUTO:
        fmt = detect_format(path)
    conversations = parse_locomo(path) if fmt is ImportFormat.LOCOMO else parse_jsonl(path)
    check_conversations(conversations)
    return fmt, conversations


async def import_file(
    db: Database,
    *,
    agent: str,
    path: Path,
    fmt: ImportFormat = ImportFormat.AUTO,
    encoder: TurnEncoder | None = None,
    after_conversation: AfterConversation | None = None,
) -> ImportReport:
    """Import a dialog file into ``agent``'s history.

    Args:
        db: The database.
        agent: The agent's handle.
        path: The file.
        fmt: Its format, or ``auto`` to tell by its first character.
        encoder: Embeds the new turns; ``None`` or an unavailable encoder leaves that to
            :func:`activities.memory.search.index_turns`.
        after_conversation: The consolidation hook, called per conversation that gained turns.

    Raises:
        ImportInputError: Unknown agent, or a malformed file (nothing is written then).
        ImportConflictError: A conversation ID in the file belongs to another agent.
    """
    async with db.engine.connect() as connection:
        known = (
            await connection.execute(text("SELECT 1 FROM agents WHERE handle = :a"), {"a": agent})
        ).first()
    if known is None:
        raise ImportInputError(f"unknown agent {agent!r}: create it with `persyn agent create`")
    fmt, conversations = await asyncio.to_thread(parse, path, fmt)
    report = ImportReport(
        agent=agent,
        format=fmt,
        conversations=len(conversations),
        turns=sum(len(c.turns) for c in conversations),
    )
    people = await _people(db, agent, conversations)
    use_encoder = encoder
    for source in sorted(conversations, key=lambda c: min(t.at for t in c.turns)):
        conversation, records = _records(agent, source, people)
        async with db.session() as session:
            stored = await existing_turns(session, turn_ids=[r.id for r in records])
        fresh = [r for r in records if r.id not in stored]
        if fresh and use_encoder is not None:
            use_encoder = await _embed(use_encoder, fresh, report)
        if not fresh:
            continue
        async with db.session() as session:
            new, added = await write_conversation(
                session,
                agent=agent,
                channel=source.channel,
                conversation_id=conversation,
                turns=fresh,
                embed_model=encoder.name if encoder is not None else None,
            )
        report.conversations_added += int(new)
        report.turns_added += added
        if added:
            report.conversation_ids.append(conversation)
            if after_conversation is not None:
                await after_conversation(conversation)
    return report


async def _embed(
    encoder: TurnEncoder, fresh: list[TurnRecord], report: ImportReport
) -> TurnEncoder | None:
    documents = [
        turn_embedding_text(speaker_name=r.speaker_name, at=r.at, text=r.text) for r in fresh
    ]
    try:
        vectors = await encoder.encode(documents)
    except EmbeddingUnavailableError as err:
        # Store the dialog anyway; index_turns embeds it when the encoder is back.
        report.notice = f"turns stored without embeddings ({err}): run index_turns later"
        return None
    for record, vector in zip(fresh, vectors, strict=True):
        record.embedding = vector
    report.turns_embedded += len(fresh)
    return encoder


async def _people(
    db: Database, agent: str, conversations: list[SourceConversation]
) -> dict[tuple[str, str], str]:
    """Person ID per (channel key, speaker id), creating people met for the first time."""
    latest: dict[tuple[str, str], tuple[ChannelRef, str, datetime]] = {}
    for conversation in conversations:
        for turn in conversation.turns:
            if turn.role != "person":
                continue
            key = (conversation.channel.key, turn.speaker_id)
            seen = latest.get(key)
            if seen is None or turn.at >= seen[2]:
                latest[key] = (conversation.channel, turn.speaker_name, turn.at)
    people: dict[tuple[str, str], str] = {}
    async with db.engine.connect() as connection:
        rows = await connection.execute(
            text(
                "SELECT service || ':' || channel AS key, speaker_id, person_id "
                "FROM identities WHERE agent = :a"
            ),
            {"a": agent},
        )
        for row in rows:
            people[(str(row.key), str(row.speaker_id))] = str(row.person_id)
    for key, (channel, name, at) in sorted(latest.items()):
        if key in people:
            continue  # known already: importing old dialog must not rewind their last-seen time
        async with db.session() as session:
            resolved = await resolve_speaker(
                session,
                agent=agent,
                channel=channel,
                speaker=Speaker(speaker_id=key[1], display_name=name),
                seen_at=at,
            )
        people[key] = resolved.person_id
    return people


def _records(
    agent: str, source: SourceConversation, people: dict[tuple[str, str], str]
) -> tuple[str, list[TurnRecord]]:
    first = min(t.at for t in source.turns)
    conversation = conversation_id(
        agent=agent, channel_key=source.channel.key, key=source.key, first_at=first
    )
    same_instant: dict[int, int] = {}
    records: list[TurnRecord] = []
    for turn in source.turns:
        millis = int(turn.at.timestamp() * 1000)
        ordinal = same_instant.get(millis, 0)
        same_instant[millis] = ordinal + 1
        person = (
            people.get((source.channel.key, turn.speaker_id)) if turn.role == "person" else None
        )
        records.append(
            TurnRecord(
                id=turn_id(
                    agent=agent,
                    conversation=conversation,
                    at=turn.at,
                    same_instant=ordinal,
                    source=turn.key or f"{turn.speaker_id}\x1f{turn.text}",
                ),
                role=turn.role,
                speaker_id=person or (agent if turn.role == "agent" else turn.speaker_id),
                speaker_name=turn.speaker_name,
                person_id=person,
                text=turn.text,
                at=turn.at,
                tags=turn.tags,
                source_ref=turn.key,
            )
        )
    return conversation, records
