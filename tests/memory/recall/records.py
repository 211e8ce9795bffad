"""Test helpers: agents, channels, people and memory records written straight to PostgreSQL.

Memory formation is built elsewhere; recall only needs rows shaped like the ones it writes.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime

from sqlalchemy import text

from schemas.agents import AgentCreate
from schemas.events import ChannelRef
from schemas.ids import new_ulid
from store.db import Database
from store.queries.agents import create_agent
from store.queries.people import ensure_channel
from store.sql import vector_literal
from tests.harness import unique

NOW = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)


async def new_agent(db: Database, prefix: str = "recall") -> str:
    handle = unique(prefix)
    async with db.session() as session:
        await create_agent(
            session, spec=AgentCreate(handle=handle, name="Recall Test", persona="A tester.")
        )
    return handle


async def add_channel(
    db: Database, agent: str, channel: ChannelRef, *, group: str | None = None
) -> str:
    async with db.session() as session:
        channel_id = await ensure_channel(session, agent=agent, channel=channel, seen_at=NOW)
        await (await session.connection()).execute(
            text("UPDATE channels SET memory_group = :g WHERE id = :id"),
            {"g": group, "id": channel_id},
        )
        await session.commit()
    return channel_id


async def add_memory(
    db: Database,
    *,
    agent: str,
    channel_id: str,
    summary: str,
    vector: Sequence[float] | None = None,
    embed_model: str | None = None,
    sensitivity: str = "private",
    participants: Sequence[str] = (),
    created_at: datetime = NOW,
    emotion: str | None = None,
    conversation_id: str | None = None,
    turn_first: str | None = None,
    turn_last: str | None = None,
    forgotten_at: datetime | None = None,
    importance: int = 5,
    record_id: str | None = None,
) -> str:
    record_id = record_id or new_ulid()
    async with db.session() as session:
        await (await session.connection()).execute(
            text(
                "INSERT INTO memory_records (id, agent, channel_id, conversation_id, summary, "
                "embedding, embed_model, importance, tags, emotion, sensitivity, participants, "
                "turn_first, turn_last, created_at, forgotten_at) VALUES (:id, :agent, :channel, "
                ":conversation, :summary, CAST(:embedding AS vector), :model, :importance, '{}', "
                ":emotion, :sensitivity, CAST(:participants AS varchar[]), :first, :last, "
                ":created_at, :forgotten_at)"
            ),
            {
                "id": record_id,
                "agent": agent,
                "channel": channel_id,
                "conversation": conversation_id,
                "summary": summary,
                "embedding": vector_literal(vector) if vector is not None else None,
                "model": embed_model if vector is not None else None,
                "importance": importance,
                "emotion": emotion,
                "sensitivity": sensitivity,
                "participants": list(participants),
                "first": turn_first,
                "last": turn_last,
                "created_at": created_at,
                "forgotten_at": forgotten_at,
            },
        )
        await session.commit()
    return record_id


async def person_of(db: Database, agent: str, speaker: str) -> str:
    """The person ID the agent resolved ``speaker`` to (on the terminal service)."""
    async with db.session() as session:
        row = await (await session.connection()).execute(
            text("SELECT person_id FROM identities WHERE agent = :a AND speaker_id = :s"),
            {"a": agent, "s": speaker},
        )
        return str(row.scalar_one())
