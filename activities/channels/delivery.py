"""The delivery workflow's activities: pacing, one attempt through the adapter, giving up.

Each attempt is one adapter call; Temporal retries a retryable failure with backoff (an
adapter's ``retry_after`` sets the next delay) until the delivery's time is up. A row already
delivered is never handed to its adapter again, so a retried activity after a success that
was recorded costs nothing.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from temporalio import activity
from temporalio.exceptions import ApplicationError

from activities.channels.adapters.base import (
    AdapterRegistry,
    DeliveryError,
    DeliveryOutcome,
    OutboundMessage,
)
from activities.channels.adapters.pull import PullAdapter
from activities.channels.starting import channel_ref
from schemas.delivery import (
    DeliverInput,
    DeliveryAttempt,
    DeliverySettled,
    DeliveryStatus,
    PaceDecision,
    PaceInput,
    PacingSettings,
    SettleDeliveryInput,
)
from store.db import Database
from store.queries import delivery as queries

DELIVERY_FAILED = "DeliveryFailed"
"""``ApplicationError.type`` of an attempt that may succeed later."""
DELIVERY_REFUSED = "DeliveryRefused"
"""``ApplicationError.type`` of a delivery that cannot succeed (not retried)."""


class DeliveryActivities:
    """Delivery of outbox rows through the worker's channel adapters."""

    def __init__(self, db: Database, adapters: AdapterRegistry, pacing: PacingSettings) -> None:
        self._db = db
        self._adapters = adapters
        self._pacing = pacing

    @activity.defn(name="channels.pace")
    async def pace(self, data: PaceInput) -> PaceDecision:
        """Let the message through its channel's pacing (or block it), once per row."""
        async with self._db.session() as session:
            row = await queries.get_message(session, message_id=data.message_id)
            if row is None:
                raise ApplicationError(
                    f"no outbox message {data.message_id}",
                    type=DELIVERY_REFUSED,
                    non_retryable=True,
                )
            settings = await queries.pacing_for(
                session, agent=row.agent, channel_key=row.channel_key, defaults=self._pacing
            )
            if channel_ref(row.channel_key).service not in settings.paced_services:
                return PaceDecision()
            decided = await queries.pace(
                session, message_id=data.message_id, settings=settings, now=datetime.now(UTC)
            )
        if decided.blocked is not None:
            return PaceDecision(blocked=True, reason=decided.blocked)
        return PaceDecision(
            wait_seconds=decided.wait_seconds, jitter_seconds=settings.jitter_seconds
        )

    @activity.defn(name="channels.deliver")
    async def deliver(self, data: DeliverInput) -> DeliveryAttempt:
        """One attempt through the channel's adapter; a failure is raised for Temporal to retry."""
        attempt = activity.info().attempt
        async with self._db.session() as session:
            row = await queries.get_message(session, message_id=data.message_id)
        if row is None:
            raise ApplicationError(
                f"no outbox message {data.message_id}", type=DELIVERY_REFUSED, non_retryable=True
            )
        if row.status != DeliveryStatus.PENDING:
            return DeliveryAttempt(status=DeliveryStatus(row.status), external_id=row.external_id)
        channel = channel_ref(row.channel_key)
        # A service no adapter serves is an integrator's own: a reply went back to its client
        # with the completion marker, and an unprompted message is kept until the integrator
        # pulls it (the agent's ``pull_outbox`` update), so nothing is lost for want of a push.
        adapter = self._adapters.get(channel.service) or PullAdapter(channel.service)
        message = OutboundMessage(
            message_id=row.id,
            agent=row.agent,
            channel=channel,
            conversation_id=row.conversation_id,
            text=row.text,
            unprompted=row.unprompted,
            created_at=row.created_at,
        )
        try:
            receipt = await adapter.deliver(message)
        except DeliveryError as err:
            raise await self._failed(data.message_id, attempt, err) from None
        status = (
            DeliveryStatus.DELIVERED
            if receipt.outcome is DeliveryOutcome.DELIVERED
            else DeliveryStatus.AWAITING_PICKUP
        )
        async with self._db.session() as session:
            await queries.record_delivered(
                session,
                message_id=data.message_id,
                status=status,
                attempts=attempt,
                external_id=receipt.external_id,
                at=datetime.now(UTC),
            )
        return DeliveryAttempt(status=status, external_id=receipt.external_id)

    async def _failed(self, message_id: str, attempt: int, err: DeliveryError) -> ApplicationError:
        async with self._db.session() as session:
            await queries.record_attempt(
                session, message_id=message_id, attempts=attempt, error=err.reason
            )
        return ApplicationError(
            err.reason,
            type=DELIVERY_FAILED if err.retryable else DELIVERY_REFUSED,
            non_retryable=not err.retryable,
            next_retry_delay=(
                timedelta(seconds=err.retry_after) if err.retry_after is not None else None
            ),
        )

    @activity.defn(name="channels.settle")
    async def settle(self, data: SettleDeliveryInput) -> DeliverySettled:
        """Record a delivery that gave up; a row that was delivered meanwhile keeps that."""
        async with self._db.session() as session:
            status = await queries.settle(
                session, message_id=data.message_id, status=data.status, reason=data.reason
            )
        return DeliverySettled(status=status or data.status, at=datetime.now(UTC))
