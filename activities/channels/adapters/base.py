"""The seam every channel adapter implements, and the registry the worker builds.

An adapter knows one service (``terminal``, ``web``, ``agent``, ``telegram``...). Delivery hands
it one outbox message at a time; the adapter either pushes it to the service (a team-chat API,
another agent's inbox) or, for channels whose people pull (the terminal, a browser), says the
message waits for pickup. Adapters raise :class:`DeliveryError` to be retried or given up on;
the delivery workflow owns retries, so an adapter makes exactly one attempt per call.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from typing import Protocol

from schemas.events import ChannelRef


@dataclass(frozen=True)
class OutboundMessage:
    """One outbox row, as an adapter needs it."""

    message_id: str
    """The outbox row's ULID: the idempotency key of the delivery."""
    agent: str
    channel: ChannelRef
    conversation_id: str | None
    text: str
    unprompted: bool
    created_at: datetime


class DeliveryOutcome(StrEnum):
    """What one delivery attempt achieved."""

    DELIVERED = "delivered"
    """The service accepted the message."""
    AWAITING_PICKUP = "awaiting_pickup"
    """A pull channel: the message is kept until its people connect and read it."""


@dataclass(frozen=True)
class DeliveryReceipt:
    """The adapter's answer to a delivery that did not fail."""

    outcome: DeliveryOutcome
    external_id: str | None = None
    """The service's own ID of the sent message, when it gives one."""
    detail: str = ""


class DeliveryError(Exception):
    """One attempt failed; ``retryable`` says whether another attempt may succeed."""

    def __init__(
        self, reason: str, *, retryable: bool = True, retry_after: float | None = None
    ) -> None:
        super().__init__(reason)
        self.reason = reason
        self.retryable = retryable
        self.retry_after = retry_after
        """Seconds the service asked us to wait (an HTTP 429's ``Retry-After``), if it did."""


class ChannelAdapter(Protocol):
    """Delivers outbox messages for one service."""

    @property
    def service(self) -> str:
        """The service name, as in ``ChannelRef.service``."""
        ...

    async def deliver(self, message: OutboundMessage) -> DeliveryReceipt:
        """Make one attempt to deliver ``message``; raise :class:`DeliveryError` if it fails."""
        ...


class AdapterRegistry:
    """The adapters a worker has, by service."""

    def __init__(self, adapters: list[ChannelAdapter] | None = None) -> None:
        self._by_service: dict[str, ChannelAdapter] = {}
        for adapter in adapters or []:
            self.register(adapter)

    def register(self, adapter: ChannelAdapter) -> None:
        """Add ``adapter``; a second adapter for the same service is a wiring bug."""
        if adapter.service in self._by_service:
            raise ValueError(f"two channel adapters for service {adapter.service!r}")
        self._by_service[adapter.service] = adapter

    def get(self, service: str) -> ChannelAdapter | None:
        """The adapter for ``service``, or ``None`` when this worker has none."""
        return self._by_service.get(service)

    def services(self) -> list[str]:
        """The services this worker can deliver to, sorted."""
        return sorted(self._by_service)
