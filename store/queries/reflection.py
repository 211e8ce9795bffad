"""What a heartbeat reflects on: the agent's most recent memories, across its channels.

The self-assessment's result joins a conversation's prompt, so what it reads is fenced like any
recall: by sensitivity against everyone present (the rules of :mod:`schemas.memory`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import ColumnElement, and_, or_
from sqlmodel import col, select
from sqlmodel.ext.asyncio.session import AsyncSession

from schemas.memory import Sensitivity
from store.tables import Channel, MemoryRecord


@dataclass(frozen=True)
class RecentMemory:
    """A memory as the self-assessment reads it."""

    record_id: str
    summary: str
    importance: int
    channel_key: str
    created_at: datetime


def visible_to(present: Sequence[str]) -> ColumnElement[bool]:
    """Records that may be surfaced with ``present`` in the conversation.

    Public to anyone; private when everyone present took part; confidential only one-on-one
    with a participant; restricted (or any unknown designation) never.
    """
    people = sorted(set(present))
    sensitivity = col(MemoryRecord.sensitivity)
    took_part = col(MemoryRecord.participants).contains(people)
    clauses = [
        sensitivity == Sensitivity.PUBLIC.value,
        and_(sensitivity == Sensitivity.PRIVATE.value, took_part),
    ]
    if len(people) == 1:
        clauses.append(and_(sensitivity == Sensitivity.CONFIDENTIAL.value, took_part))
    return or_(*clauses)


async def recent_memories(
    session: AsyncSession, *, agent: str, limit: int, present: Sequence[str]
) -> list[RecentMemory]:
    """The newest memories still held that everyone ``present`` may see, oldest first.

    Args:
        session: The database session.
        agent: The agent's handle.
        limit: How many memories at most.
        present: Person IDs of everyone in the conversation the assessment joins.
    """
    rows = await session.exec(
        select(MemoryRecord, Channel.key)
        .join(Channel, col(Channel.id) == col(MemoryRecord.channel_id))
        .where(
            MemoryRecord.agent == agent,
            col(MemoryRecord.forgotten_at).is_(None),
            visible_to(present),
        )
        .order_by(col(MemoryRecord.id).desc())
        .limit(limit)
    )
    memories = [
        RecentMemory(record.id, record.summary, record.importance, key, record.created_at)
        for record, key in rows
    ]
    return memories[::-1]
