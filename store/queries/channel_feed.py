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
    """The agent's messages on ``channel_key`` after ``after_id``, oldest first.

    ``after_id`` is the last thing the client saw: a message (then what came after it), or an
    event it posted (then the reply to that event and what came after it). An ID that names
    neither on this agent's channel gives nothing: the client's place cannot be known, and
    guessing could repeat a reply. An event not answered yet gives nothing either; its reply
    comes live.
    """
    after = await session.get(OutboxRow, after_id)
    if after is not None and (after.agent, after.channel_key) == (agent, channel_key):
        place = tuple_(col(OutboxRow.created_at), col(OutboxRow.id)) > tuple_(
            after.created_at, after.id
        )
    else:
        reply = await _reply_to(session, agent=agent, channel_key=channel_key, event_id=after_id)
        if reply is None:
            return []
        place = tuple_(col(OutboxRow.created_at), col(OutboxRow.id)) >= tuple_(
            reply.created_at, reply.id
        )
    rows = await session.exec(
        select(OutboxRow)
        .where(OutboxRow.agent == agent, OutboxRow.channel_key == channel_key, place)
        .order_by(col(OutboxRow.created_at), col(OutboxRow.id))
        .limit(limit)
    )
    return list(rows.all())


async def _reply_to(
    session: AsyncSession, *, agent: str, channel_key: str, event_id: str
) -> OutboxRow | None:
    """The reply the agent sent on ``channel_key`` to inbound event ``event_id``, if any."""
    rows = await session.exec(
        select(OutboxRow).where(
            OutboxRow.agent == agent,
            OutboxRow.event_id == event_id,
            OutboxRow.channel_key == channel_key,
        )
    )
    return rows.first()
