"""Transmit: the reply becomes a dialog turn and an outbox message, exactly once."""

from __future__ import annotations

from temporalio import activity

from activities.drafts import load_draft
from schemas.activation import Transmission, TransmitInput
from schemas.dialog import DialogTurn, Role
from store.db import Database
from store.queries.dialog import record_turn
from store.queries.runtime import add_outbox


class ChannelActivities:
    """Outbound delivery to channels."""

    def __init__(self, db: Database) -> None:
        self._db = db

    @activity.defn(name="channels.transmit")
    async def transmit(self, data: TransmitInput) -> Transmission:
        """Record the reply turn and queue it for the channel; a retry sends nothing twice."""
        text = data.text if data.draft_id is None else await load_draft(self._db, data.draft_id)
        turn = DialogTurn(
            turn_id=data.turn_id,
            conversation_id=data.conversation_id,
            role=Role.AGENT,
            speaker_id=data.agent,
            speaker_name=data.agent_name,
            text=text,
            at=data.at,
        )
        async with self._db.session() as session:
            await record_turn(session, agent=data.agent, channel=data.channel, turn=turn)
            inserted = await add_outbox(
                session,
                message_id=data.turn_id,
                activation_id=data.activation_id,
                agent=data.agent,
                channel_key=data.channel.key,
                conversation_id=data.conversation_id,
                text_=text,
                created_at=data.at,
            )
        return Transmission(turn=turn, duplicate=not inserted)
