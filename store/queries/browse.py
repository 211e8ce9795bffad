"""Reading an agent's conversations for a browser: those on a channel, and one by ID."""

from __future__ import annotations

from sqlmodel import col, select
from sqlmodel.ext.asyncio.session import AsyncSession

from store.tables import Channel, Conversation


async def conversations_on(
    session: AsyncSession, *, agent: str, channel_key: str, limit: int = 50
) -> list[Conversation]:
    """The agent's conversations on ``channel_key``, newest first."""
    rows = await session.exec(
        select(Conversation)
        .join(Channel, col(Channel.id) == col(Conversation.channel_id))
        .where(Conversation.agent == agent, Channel.key == channel_key)
        .order_by(col(Conversation.id).desc())
        .limit(limit)
    )
    return list(rows)


async def agents_conversation(
    session: AsyncSession, *, agent: str, conversation_id: str
) -> Conversation | None:
    """The conversation ``conversation_id`` if it is ``agent``'s."""
    found = await session.get(Conversation, conversation_id)
    return found if found is not None and found.agent == agent else None
