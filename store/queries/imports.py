"""Writing imported conversations: one transaction each, idempotent by deterministic IDs."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime

from sqlalchemy import text
from sqlmodel.ext.asyncio.session import AsyncSession

from schemas.events import ChannelRef
from schemas.ids import new_ulid
from store.sql import vector_literal


class ImportConflictError(ValueError):
    """The file names a conversation that belongs to another agent or channel."""


@dataclass
class TurnRecord:
    """One turn ready to store."""

    id: str
    role: str
    speaker_id: str
    speaker_name: str
    person_id: str | None
    text: str
    at: datetime
    tags: list[str] = field(default_factory=list)
    source_ref: str | None = None
    embedding: Sequence[float] | None = None


async def existing_turns(session: AsyncSession, *, turn_ids: Sequence[str]) -> set[str]:
    """Which of these turn IDs are already stored."""
    connection = await session.connection()
    rows = await connection.execute(
        text("SELECT id FROM dialog_turns WHERE id = ANY(CAST(:ids AS text[]))"),
        {"ids": list(turn_ids)},
    )
    return {str(r.id) for r in rows}


async def imported_conversations(
    session: AsyncSession, *, conversation_ids: Sequence[str]
) -> set[str]:
    """Which of these conversations were imported from a file rather than lived."""
    connection = await session.connection()
    rows = await connection.execute(
        text(
            "SELECT id FROM conversations WHERE id = ANY(CAST(:ids AS text[])) "
            "AND source = 'import'"
        ),
        {"ids": list(conversation_ids)},
    )
    return {str(r.id) for r in rows}


async def write_conversation(
    session: AsyncSession,
    *,
    agent: str,
    channel: ChannelRef,
    conversation_id: str,
    turns: Sequence[TurnRecord],
    embed_model: str | None,
) -> tuple[bool, int]:
    """Store a conversation and its turns in one transaction, skipping what is already there.

    Returns:
        Whether the conversation is new, and how many turns were added.

    Raises:
        ImportConflictError: The conversation ID exists for another agent or channel.
    """
    connection = await session.connection()
    first, last = min(t.at for t in turns), max(t.at for t in turns)
    channel_id = await _channel(session, agent=agent, channel=channel, seen_at=last)
    found = (
        await connection.execute(
            text("SELECT agent, channel_id FROM conversations WHERE id = :id FOR UPDATE"),
            {"id": conversation_id},
        )
    ).first()
    if found is not None and (found.agent != agent or found.channel_id != channel_id):
        await session.rollback()
        raise ImportConflictError(
            f"conversation {conversation_id} already exists on another agent or channel: "
            "give the imported conversation another id"
        )
    if found is None:
        await connection.execute(
            text(
                "INSERT INTO conversations (id, agent, channel_id, status, opened_at, closed_at, "
                "close_reason, turns, participants, source) VALUES (:id, :agent, :channel, "
                "'closed', :first, :last, 'imported', 0, '{}', 'import')"
            ),
            {
                "id": conversation_id,
                "agent": agent,
                "channel": channel_id,
                "first": first,
                "last": last,
            },
        )
    added = await connection.execute(
        text(
            "INSERT INTO dialog_turns (id, agent, conversation_id, channel_id, role, speaker_id, "
            "speaker_name, person_id, text, at, tags, source_ref, embedding, embed_model) "
            "SELECT t.id, :agent, :conversation, :channel, t.role, t.speaker_id, t.speaker_name, "
            "t.person_id, t.text, t.at, CAST(t.tags AS varchar[]), t.source_ref, "
            "CAST(t.embedding AS vector), CASE WHEN t.embedding IS NULL THEN NULL ELSE :model END "
            "FROM jsonb_to_recordset(CAST(:rows AS jsonb)) AS t (id text, role text, "
            "speaker_id text, speaker_name text, person_id text, text text, at timestamptz, "
            "tags text[], source_ref text, embedding text) "
            # Rows take their arrival sequence in this order: the source's own timeline.
            "ORDER BY t.at, t.id "
            "ON CONFLICT (id) DO NOTHING RETURNING id"
        ),
        {
            "agent": agent,
            "conversation": conversation_id,
            "channel": channel_id,
            "model": embed_model,
            "rows": _rows_json(turns),
        },
    )
    count = len(added.all())
    # Counts and participants are recomputed from what is stored, so re-runs converge.
    await connection.execute(
        text(
            "UPDATE conversations c SET turns = s.n, participants = s.people, "
            "opened_at = LEAST(c.opened_at, s.first), "
            "closed_at = GREATEST(coalesce(c.closed_at, s.last), s.last) "
            "FROM (SELECT count(*) AS n, min(at) AS first, max(at) AS last, "
            "coalesce(array_agg(DISTINCT person_id) FILTER (WHERE person_id IS NOT NULL), "
            "'{}') AS people FROM dialog_turns WHERE conversation_id = :id) AS s "
            "WHERE c.id = :id"
        ),
        {"id": conversation_id},
    )
    await session.commit()
    return found is None, count


async def _channel(
    session: AsyncSession, *, agent: str, channel: ChannelRef, seen_at: datetime
) -> str:
    # Like ensure_channel, but old dialog never moves a channel's last activity back in time.
    connection = await session.connection()
    row = (
        await connection.execute(
            text(
                "INSERT INTO channels (id, agent, key, service, channel, created_at, "
                "last_active_at) VALUES (:id, :agent, :key, :service, :channel, :at, :at) "
                "ON CONFLICT ON CONSTRAINT uq_channel_key DO UPDATE SET last_active_at = "
                "GREATEST(channels.last_active_at, EXCLUDED.last_active_at) RETURNING id"
            ),
            {
                "id": new_ulid(),
                "agent": agent,
                "key": channel.key,
                "service": channel.service,
                "channel": channel.channel,
                "at": seen_at,
            },
        )
    ).one()
    return str(row.id)


def _rows_json(turns: Sequence[TurnRecord]) -> str:
    return json.dumps(
        [
            {
                "id": t.id,
                "role": t.role,
                "speaker_id": t.speaker_id,
                "speaker_name": t.speaker_name,
                "person_id": t.person_id,
                "text": t.text,
                "at": t.at.isoformat(),
                "tags": t.tags,
                "source_ref": t.source_ref,
                "embedding": vector_literal(t.embedding) if t.embedding is not None else None,
            }
            for t in turns
        ]
    )


@dataclass(frozen=True)
class UnconsolidatedRange:
    """The turns of a conversation no consolidation has claimed yet."""

    channel: ChannelRef
    after_turn: str | None
    through_turn: str


_UNCONSOLIDATED = text(
    """
    SELECT ch.service, ch.channel,
           (SELECT f.through_turn FROM memory_formations AS f
             WHERE f.conversation_id = c.id
             ORDER BY f.turn_last_at DESC NULLS LAST, f.through_turn DESC LIMIT 1) AS after_turn,
           (SELECT t.id FROM dialog_turns AS t
             WHERE t.conversation_id = c.id ORDER BY t.seq DESC LIMIT 1) AS through_turn
      FROM conversations AS c JOIN channels AS ch ON ch.id = c.channel_id
     WHERE c.id = :conversation
    """
)


async def unconsolidated_range(
    session: AsyncSession, *, conversation_id: str
) -> UnconsolidatedRange | None:
    """What of ``conversation_id`` is left to consolidate, or ``None`` if nothing is."""
    connection = await session.connection()
    row = (await connection.execute(_UNCONSOLIDATED, {"conversation": conversation_id})).first()
    if row is None or row.through_turn is None or row.through_turn == row.after_turn:
        return None
    return UnconsolidatedRange(
        channel=ChannelRef(service=row.service, channel=row.channel),
        after_turn=row.after_turn,
        through_turn=row.through_turn,
    )
