"""Pickup by a Temporal-only integrator: the ``pull_outbox`` update's store step.

Run as a local activity from the agent's ``pull_outbox`` update: acknowledge what the integrator
received, then list what is still kept for it. Both are idempotent, so a retried attempt, or the
same pull sent again, returns what is still unacknowledged and delivers nothing twice.
"""

from __future__ import annotations

from temporalio import activity

from schemas.pickup import PulledMessage, PullOutboxRequest, PullOutboxResult
from store.db import Database
from store.queries import pickup as queries


class PickupActivities:
    """The outbox as an integrator's pull sees it."""

    def __init__(self, db: Database) -> None:
        self._db = db

    @activity.defn(name="channels.pull_outbox")
    async def pull_outbox(self, data: PullOutboxRequest) -> PullOutboxResult:
        """Acknowledge the IDs received before, then return the messages still kept."""
        pull = data.pull
        async with self._db.session() as session:
            acknowledged = await queries.acknowledge(
                session, agent=data.agent, service=pull.service, message_ids=pull.ack
            )
            kept = await queries.kept(
                session,
                agent=data.agent,
                service=pull.service,
                channel=pull.channel,
                limit=pull.limit,
            )
        return PullOutboxResult(
            acknowledged=acknowledged,
            messages=[
                PulledMessage(
                    message_id=message.row.id,
                    service=pull.service,
                    channel=message.row.channel_key.partition(":")[2],
                    recipients=message.recipients,
                    text=message.row.text,
                    created_at=message.row.created_at,
                )
                for message in kept
            ],
        )
