"""Pull channels: the terminal and the browser, whose people fetch their messages.

Nothing is pushed to them. A reply to a message they sent went back to the waiting client with
the completion marker, so it is delivered already; a message the agent sent on its own waits in
the outbox until a client connected to the channel shows it and marks it picked up
(``store.queries.delivery.mark_picked_up``).
"""

from __future__ import annotations

from activities.channels.adapters.base import DeliveryOutcome, DeliveryReceipt, OutboundMessage
from schemas.events import ChannelRef

PULL_SERVICES = ("terminal", "web")
"""Services whose people fetch their messages."""

OWN_SERVICE = "self"
"""The agent's own channels (``self:reflection`` for heartbeats, reminders): what it says there
is heard by nobody else, so it is delivered by being written."""


def answered_in_place(channel: ChannelRef, *, unprompted: bool) -> bool:
    """Whether a message is delivered by being transmitted: a reply on a pull channel.

    Its waiting client gets it with the completion marker, so the row is written delivered and
    no delivery run is started (three workflow tasks saved on every terminal or web reply).
    """
    if channel.service == OWN_SERVICE:
        return True
    return channel.service in PULL_SERVICES and not unprompted


class PullAdapter:
    """The adapter of a service whose clients pull (``terminal``, ``web``)."""

    def __init__(self, service: str) -> None:
        self._service = service

    @property
    def service(self) -> str:
        """The service name, as in ``ChannelRef.service``."""
        return self._service

    async def deliver(self, message: OutboundMessage) -> DeliveryReceipt:
        """Prompted replies are delivered already; unprompted messages wait for pickup."""
        if message.unprompted:
            return DeliveryReceipt(DeliveryOutcome.AWAITING_PICKUP, detail="kept until shown")
        return DeliveryReceipt(DeliveryOutcome.DELIVERED, detail="returned with the receipt")


class OwnChannelAdapter:
    """The agent's own channels: nothing to send.

    Rows written before such messages were delivered in place still reach here by the sweep.
    """

    @property
    def service(self) -> str:
        """The service name, as in ``ChannelRef.service``."""
        return OWN_SERVICE

    async def deliver(self, message: OutboundMessage) -> DeliveryReceipt:
        """Delivered: the agent was the only one listening."""
        return DeliveryReceipt(DeliveryOutcome.DELIVERED, detail="the agent's own channel")
