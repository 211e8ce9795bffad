"""What the agent sent on one channel, in order: the web channel's replayable feed.

Outbox IDs are ULIDs and rows are ordered by ``(created_at, id)``, so a client that names the
last message it saw gets exactly the ones after it.
"""

from __future__ import annotations

from sqlalchemy import tuple_
from sqlmodel import col, select
from sqlmodel.ext.asyncio.session import AsyncSession

from store.tables import OutboxRow


async def outbox_message(session: AsyncSession, *, message_id: str) -> OutboxRow | None:
    """One outbox row by its ID."""
    return await session.get(OutboxRow, message_id)


async def outbox_after(
    session: AsyncSession, *, agent: str, channel_key: str, after_id: str, limit: int = 200
) -> list[OutboxRow]:
    """The agent's messages on ``channel_key`` sent after message ``after_id``, oldest first.

    An ``after_id`` that names no message of this agent and channel gives nothing: the
    client's place cannot be known, and guessing could repeat a reply.
    """
    after = await session.get(OutboxRow, after_id)
    if after is None or after.agent != agent or after.channel_key != channel_key:
        return []
    rows = await session.exec(
        select(OutboxRow)
        .where(
            OutboxRow.agent == agent,
            OutboxRow.channel_key == channel_key,
            tuple_(col(OutboxRow.created_at), col(OutboxRow.id))
            > tuple_(after.created_at, after.id),
        )
        .order_by(col(OutboxRow.created_at), col(OutboxRow.id))
        .limit(limit)
    )
    return list(rows.all())
