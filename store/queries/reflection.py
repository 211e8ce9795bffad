"""What a heartbeat reflects on: the agent's most recent memories, across its channels."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

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


async def recent_memories(session: AsyncSession, *, agent: str, limit: int) -> list[RecentMemory]:
    """The newest memories still held, oldest first.

    Only the agent is present in its own reflection, so every channel's memories are eligible
    except ``restricted`` ones, which are never surfaced into any conversation.
    """
    rows = await session.exec(
        select(MemoryRecord, Channel.key)
        .join(Channel, col(Channel.id) == col(MemoryRecord.channel_id))
        .where(
            MemoryRecord.agent == agent,
            col(MemoryRecord.forgotten_at).is_(None),
            MemoryRecord.sensitivity != Sensitivity.RESTRICTED.value,
        )
        .order_by(col(MemoryRecord.id).desc())
        .limit(limit)
    )
    memories = [
        RecentMemory(record.id, record.summary, record.importance, key, record.created_at)
        for record, key in rows
    ]
    return memories[::-1]
