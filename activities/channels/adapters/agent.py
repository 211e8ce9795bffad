"""The ``agent`` adapter: a message on ``agent:<handle>`` goes into that agent's inbox.

It is delivered once the recipient's inbox accepts it (the ``peer`` update with start), not
when the recipient has answered: its answer is a message of its own, delivered the same way.
The recipient's event ID is derived from the outbox row's ULID (``schemas.peers.peer_event_id``)
and the update ID is the row's, so a retried delivery is answered from the recipient's markers
and never becomes a second turn.
"""

from __future__ import annotations

from temporalio.client import Client
from temporalio.service import RPCError

from activities.channels.adapters.base import (
    DeliveryError,
    DeliveryOutcome,
    DeliveryReceipt,
    OutboundMessage,
)
from schemas.peers import AGENT_SERVICE, PeerMessageInput
from temporal import inbox


class AgentAdapter:
    """Delivers to other agents through their inbox workflow."""

    def __init__(self, client: Client, *, task_queue: str) -> None:
        self._client = client
        self._task_queue = task_queue

    @property
    def service(self) -> str:
        """``agent``."""
        return AGENT_SERVICE

    async def deliver(self, message: OutboundMessage) -> DeliveryReceipt:
        """Hand the message to the recipient's inbox; refused input is not retried."""
        recipient = message.channel.channel
        peer = PeerMessageInput(
            message_id=message.message_id,
            sender=message.agent,
            text=message.text,
            sent_at=message.created_at,
        )
        try:
            await inbox.peer(
                self._client, handle=recipient, message=peer, task_queue=self._task_queue
            )
        except inbox.SubmitRejectedError as err:
            raise DeliveryError(f"agent {recipient!r} refused it: {err}", retryable=False) from err
        except RPCError as err:
            raise DeliveryError(f"could not reach agent {recipient!r}: {err}") from err
        return DeliveryReceipt(DeliveryOutcome.DELIVERED, external_id=message.message_id)
