"""The channel adapters a worker delivers through, built once by ``workers/build.py``.

Each channel engineer adds one line here for a new service; the delivery activity looks the
adapter up by the channel's service. An unprompted message for a service without one fails
visibly; a reply to a client on such a service (an integrator's own) went back with its
completion marker and counts as delivered.
"""

from __future__ import annotations

from temporalio.client import Client

from activities.channels.adapters.agent import AgentAdapter
from activities.channels.adapters.base import AdapterRegistry, ChannelAdapter
from activities.channels.adapters.pull import PULL_SERVICES, OwnChannelAdapter, PullAdapter
from activities.channels.telegram.adapter import telegram_adapters
from schemas.settings import Settings


def build_registry(
    settings: Settings,
    *,
    client: Client | None,
    task_queue: str,
    extra: list[ChannelAdapter] | None = None,
) -> AdapterRegistry:
    """Every adapter this worker has.

    Args:
        settings: The configuration (team-chat adapters read their tokens from it).
        client: The worker's Temporal client; without one there is no ``agent`` adapter.
        task_queue: Where recipient agents' workflows run.
        extra: More adapters (tests).
    """
    adapters: list[ChannelAdapter] = [PullAdapter(service) for service in PULL_SERVICES]
    adapters.append(OwnChannelAdapter())
    adapters.extend(telegram_adapters(settings))  # none unless [telegram] names a bot
    if client is not None:
        adapters.append(AgentAdapter(client, task_queue=task_queue))
    return AdapterRegistry([*adapters, *(extra or [])])
