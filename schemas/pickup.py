"""Pickup by a Temporal-only integrator: the ``pull_outbox`` update's wire models.

A message the agent sends on its own (``message_contact``, a reminder, a goal) to a service no
channel adapter serves (an integrator's own, such as ``crm``) is kept in the outbox for pickup.
The integrator pulls it through the agent's ``pull_outbox`` update and acknowledges it by its
message ID in a later pull: a message is returned until it is acknowledged and never after, so
with the integrator's own de-duplication by ID it is received exactly once.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import AwareDatetime, Field, StringConstraints, field_validator

from schemas.channel_names import ChannelName
from schemas.events import Wire
from schemas.ids import AgentHandle, Ulid

MAX_PULL = 100
"""Most messages one pull returns, and most IDs one pull acknowledges."""

RESERVED_SERVICES = {
    "web": "the web channel's messages are read from its /v1 stream (docs/integration.md)",
    "terminal": "the terminal's messages are picked up by `persyn chat`",
    "self": "the agent's own channels are heard by nobody else",
    "agent": "messages between agents are delivered into the other agent's inbox",
}
"""Services whose messages reach their people another way, each with where they go."""


class PullOutboxInput(Wire):
    """Acknowledge messages received earlier, then take those still kept for pickup."""

    service: Annotated[
        str,
        StringConstraints(pattern=r"^[a-z][a-z0-9_-]{0,31}$"),
        Field(description="Your own service, as in ChannelRef.service (for example crm)."),
    ]
    channel: ChannelName | None = Field(
        default=None, description="Only this channel of the service; none: every channel."
    )
    limit: int = Field(
        default=20, ge=0, le=MAX_PULL, description="Most messages to return (0: only acknowledge)."
    )
    ack: list[Ulid] = Field(
        default_factory=list,
        max_length=MAX_PULL,
        description="Message IDs received in an earlier pull: they are marked delivered and "
        "never returned again. Acknowledging an ID twice is harmless.",
    )

    @field_validator("service")
    @classmethod
    def _not_reserved(cls, service: str) -> str:
        where = RESERVED_SERVICES.get(service)
        if where is not None:
            raise ValueError(f"service {service!r} cannot be pulled: {where}")
        return service


class PulledMessage(Wire):
    """One message kept for pickup."""

    message_id: Ulid = Field(description="Stable ID: acknowledge it in your next pull.")
    service: str
    channel: str
    recipients: list[str] = Field(
        description="Speaker IDs of the people the agent knows on this channel (one on a "
        "channel that is a single person's)."
    )
    text: str
    created_at: AwareDatetime


class PullOutboxResult(Wire):
    """What a pull acknowledged and the messages still waiting, oldest first."""

    acknowledged: int = Field(description="How many acknowledged IDs were delivered by this pull.")
    messages: list[PulledMessage]


class PullOutboxRequest(Wire):
    """The ``channels.pull_outbox`` local activity's input: the pull, for one agent."""

    agent: AgentHandle
    pull: PullOutboxInput
