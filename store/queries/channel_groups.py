"""Channel groups: channels in one group share memory; a channel in none shares nothing.

Recall and memory formation read ``channels.memory_group``; the operator sets it here.
"""

from __future__ import annotations

from sqlmodel import col, select
from sqlmodel.ext.asyncio.session import AsyncSession

from schemas.autonomy import SELF_SERVICE
from schemas.contacts import ChannelRecord, ContactError
from schemas.events import ChannelRef
from store.tables import Channel


def _record(channel: Channel) -> ChannelRecord:
    return ChannelRecord(
        key=channel.key, memory_group=channel.memory_group, last_active=channel.last_active_at
    )


async def list_channels(session: AsyncSession, *, agent: str) -> list[ChannelRecord]:
    """The agent's channels (not its own self-channel), by group, then key."""
    rows = await session.exec(
        select(Channel)
        .where(Channel.agent == agent, Channel.service != SELF_SERVICE)
        .order_by(col(Channel.memory_group).nulls_last(), col(Channel.key))
    )
    return [_record(c) for c in rows]


async def group_channel(
    session: AsyncSession, *, agent: str, channel: ChannelRef, group: str | None
) -> ChannelRecord:
    """Put a channel in ``group`` (``None``: in no group); takes effect on the next turn.

    Raises:
        ContactError: The agent has never talked on that channel.
    """
    row = (
        await session.exec(
            select(Channel).where(
                Channel.agent == agent,
                Channel.key == channel.key,
                Channel.service != SELF_SERVICE,
            )
        )
    ).first()
    if row is None:
        raise ContactError(f"{agent} has no channel {channel.key[:80]!r}: see persyn channels list")
    row.memory_group = group
    session.add(row)
    await session.commit()
    return _record(row)
