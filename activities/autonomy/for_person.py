"""A reminder a person asked for, sent to them when it fires.

A reminder set from someone's words ("remind me to call mum in 10 minutes",
``activities.asked_for``) names the person and the channel they asked on. When it fires, the
platform itself sends them the reminder, as an unprompted message on that channel, whatever the
model then makes of its impulse: on a plan with no tools the model could not send it. The
message's ID is derived from the firing's event ID, so a retried activity sends it once.
"""

from __future__ import annotations

import hashlib
from datetime import datetime

from temporalio.client import Client

from activities.channels.starting import channel_ref, start_delivery
from schemas.delivery import DeliverySettings
from schemas.ids import ulid_from_parts, ulid_time
from store.db import Database
from store.queries.agents import get_agent
from store.queries.contacts import send_unprompted
from store.tables.autonomy import ReminderRow


def message_id_for(event_id: str) -> str:
    """The ID of the message a firing sends its person: the same on every attempt."""
    digest = hashlib.sha256(f"reminder-for-person:{event_id}".encode()).digest()
    return ulid_from_parts(ulid_time(event_id), int.from_bytes(digest[:10], "big"))


def reminder_message(objective: str) -> str:
    """What the person reads."""
    return f"Reminder, as you asked: {objective}"


async def send_to_person(
    db: Database,
    client: Client,
    reminder: ReminderRow,
    *,
    event_id: str,
    at: datetime,
    settings: DeliverySettings,
) -> str | None:
    """Send ``reminder`` to its person; returns the message's ID (``None``: it is for no one)."""
    if reminder.for_person is None or reminder.for_channel is None:
        return None
    channel = channel_ref(reminder.for_channel)
    message_id = message_id_for(event_id)
    async with db.session() as session:
        agent = await get_agent(session, handle=reminder.agent)
        await send_unprompted(
            session,
            message_id=message_id,
            agent=reminder.agent,
            agent_name=agent.name if agent is not None else reminder.agent,
            channel=channel,
            text=reminder_message(reminder.objective),
            at=at,
        )
    await start_delivery(
        client,
        message_id=message_id,
        agent=reminder.agent,
        channel=channel,
        unprompted=True,
        settings=settings,
    )
    return message_id
