"""Agent-to-agent messages: one Persyn agent speaking to another on an ``agent:`` channel.

The sender's outbox row becomes the recipient's inbound event through the internal ``peer``
update of ``AgentWorkflow``; only the ``agent`` channel adapter sends it. The agent builds the
event itself (as it does for impulses), so the channel and speaker always name the real sender;
a client's ``submit`` or ``deliver`` on an ``agent:`` channel is refused.
"""

from __future__ import annotations

import hashlib

from pydantic import AwareDatetime

from schemas.events import ChannelRef, InboundEvent, Name, Speaker, Wire
from schemas.ids import AgentHandle, Ulid, ulid_from_parts, ulid_time
from schemas.text import MessageText

AGENT_SERVICE = "agent"
"""The service of channels between agents: ``agent:<the other agent's handle>``."""


class PeerMessageInput(Wire):
    """Input of the internal ``peer`` update: another agent's message, from its outbox."""

    message_id: Ulid
    """The sender's outbox row; the event's ID is derived from it, so the recipient takes it
    once (:func:`peer_event_id`)."""
    sender: AgentHandle
    sender_name: Name | None = None
    text: MessageText
    sent_at: AwareDatetime


def agent_channel(handle: str) -> ChannelRef:
    """The channel on which an agent talks with the agent ``handle``."""
    return ChannelRef(service=AGENT_SERVICE, channel=handle)


def peer_event_id(message_id: str) -> str:
    """The recipient's event ID for the sender's outbox row ``message_id``.

    Derived, not the row's own ID: a reply's outbox row shares its ID with the sender's dialog
    turn, and the recipient's turn for the same words must be a different row. Same time,
    randomness from a digest, so the same row always gives the same event (deterministic).
    """
    digest = hashlib.sha256(f"peer:{message_id}".encode()).digest()
    return ulid_from_parts(ulid_time(message_id), int.from_bytes(digest[:10], "big"))


def peer_event(data: PeerMessageInput) -> InboundEvent:
    """The event a peer message becomes: on ``agent:<sender>``, spoken by the sender."""
    return InboundEvent(
        event_id=peer_event_id(data.message_id),
        channel=agent_channel(data.sender),
        speaker=Speaker(speaker_id=data.sender, display_name=data.sender_name),
        text=data.text,
        sent_at=data.sent_at,
    )
