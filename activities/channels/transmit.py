"""Transmit: the reply becomes a dialog turn and an outbox message with its delivery, once."""

from __future__ import annotations

from temporalio import activity
from temporalio.client import Client

from activities.channels.adapters.pull import answered_in_place
from activities.channels.starting import start_delivery
from activities.drafts import load_draft
from schemas.activation import SendReplyInput, SentReply, Transmission, TransmitInput
from schemas.delivery import DeliverySettings
from schemas.dialog import DialogTurn, Role
from schemas.fences import without_fence_tags
from store.db import Database
from store.queries.dialog import record_turn_on
from store.queries.runtime import add_outbox_on, record_outcome_on


class ChannelActivities:
    """Outbound delivery to channels."""

    def __init__(
        self,
        db: Database,
        client: Client | None = None,
        delivery: DeliverySettings | None = None,
    ) -> None:
        self._db = db
        self._client = client  # starts each row's delivery; without one, the sweep does
        self._delivery = delivery or DeliverySettings()

    @activity.defn(name="channels.transmit")
    async def transmit(self, data: TransmitInput) -> Transmission:
        """Record the reply turn, queue it and start its delivery; a retry sends nothing twice."""
        text = data.text if data.draft_id is None else await load_draft(self._db, data.draft_id)
        # A model's echo of the prompt's fence markup is not for the person (schemas/fences.py).
        text = without_fence_tags(text)
        turn = DialogTurn(
            turn_id=data.turn_id,
            conversation_id=data.conversation_id,
            role=Role.AGENT,
            speaker_id=data.agent,
            speaker_name=data.agent_name,
            text=text,
            at=data.at,
        )
        delivered = answered_in_place(data.channel, unprompted=False)
        # Two statements on the driver lane, each atomic and idempotent on its own.
        await record_turn_on(self._db, agent=data.agent, channel=data.channel, turn=turn)
        inserted = await add_outbox_on(
            self._db.lane,
            message_id=data.turn_id,
            activation_id=data.activation_id,
            agent=data.agent,
            channel_key=data.channel.key,
            conversation_id=data.conversation_id,
            text_=text,
            created_at=data.at,
            delivered=delivered,
            event_id=data.event_id,
        )
        if self._client is not None and not delivered:
            # Also on a retry: the insert may have committed just before a crash, and the
            # delivery run's ID is the row's, so it starts once.
            await start_delivery(
                self._client,
                message_id=data.turn_id,
                agent=data.agent,
                channel=data.channel,
                unprompted=False,
                settings=self._delivery,
                conversation_id=data.conversation_id,
            )
        return Transmission(turn=turn, duplicate=not inserted)

    @activity.defn(name="channels.send_reply")
    async def send_reply(self, data: SendReplyInput) -> SentReply:
        """Transmit the reply and record how its event ended, in one step.

        Both halves are idempotent (the turn and the outbox row by the turn's ID, the outcome
        by the activation's), so an attempt run again sends and records nothing twice.
        """
        sent = await self.transmit(data.transmit)
        marker = data.marker.model_copy(update={"text": sent.turn.text})
        await record_outcome_on(
            self._db.lane, agent=data.transmit.agent, trigger=data.trigger, marker=marker
        )
        return SentReply(turn=sent.turn, marker=marker)
