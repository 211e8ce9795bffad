"""The channels an agent talks on, and the memory groups that let channels share memory."""

from __future__ import annotations

from schemas.contacts import ChannelRecord
from schemas.events import ChannelRef
from schemas.settings import Settings
from store.queries import channel_groups
from usecases.directory import in_agent


async def list_channels(*, settings: Settings, agent: str) -> list[ChannelRecord]:
    """The agent's channels with their memory groups.

    Raises:
        UnknownAgentError: no such agent.
    """
    return await in_agent(settings, agent, lambda s: channel_groups.list_channels(s, agent=agent))


async def group_channel(
    *, settings: Settings, agent: str, channel: ChannelRef, group: str | None
) -> ChannelRecord:
    """Put a channel in a memory group (``None``: its own memory); from the next turn on."""
    return await in_agent(
        settings,
        agent,
        lambda s: channel_groups.group_channel(s, agent=agent, channel=channel, group=group),
    )
