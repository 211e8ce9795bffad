"""Inbound events, receipts and completion markers: what channel adapters exchange with agents."""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum
from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field, StringConstraints

from schemas.ids import AgentHandle, ConversationId, Ulid
from schemas.text import MessageText

Name = Annotated[str, StringConstraints(min_length=1, max_length=200, strip_whitespace=True)]


class Wire(BaseModel):
    """Base of every wire model: unknown fields are refused so typos surface at once."""

    model_config = ConfigDict(extra="forbid", frozen=False)


class Modality(StrEnum):
    """How an input arrived; everything is normalised to text before the pipeline."""

    TEXT = "text"
    IMAGE = "image"
    AUDIO = "audio"


class Trigger(StrEnum):
    """What started an activation."""

    MESSAGE = "message"
    REMINDER = "reminder"
    HEARTBEAT = "heartbeat"
    SYSTEM = "system"


class ChannelRef(Wire):
    """A communication surface: ``service`` (terminal, web, team chat, ...) plus its channel key.

    Memory is compartmentalised by channel, and a person's identity is looked up by
    service + channel + speaker id.
    """

    service: Annotated[str, StringConstraints(pattern=r"^[a-z][a-z0-9_-]{0,31}$")]
    channel: Name

    @property
    def key(self) -> str:
        """The channel's unique key, ``service:channel``."""
        return f"{self.service}:{self.channel}"


class Speaker(Wire):
    """Who said something, as the channel knows them."""

    speaker_id: Name
    display_name: Name | None = None


class InboundEvent(Wire):
    """One stimulus for an agent, normalised by a channel adapter.

    ``event_id`` is the idempotency key: submitting the same event twice yields the same
    receipt and one reply.
    """

    event_id: Ulid
    channel: ChannelRef
    speaker: Speaker
    text: MessageText
    modality: Modality = Modality.TEXT
    addressed: bool = Field(
        default=True, description="Whether the message was addressed to the agent."
    )
    trigger: Trigger = Trigger.MESSAGE
    conversation_id: ConversationId | None = Field(
        default=None, description="Continue this open conversation instead of the channel's."
    )
    sent_at: datetime | None = None
    stream: bool = Field(
        default=False, description="Stream token deltas over LISTEN/NOTIFY (presentation only)."
    )


class SubmitEventInput(Wire):
    """Input of the ``submit`` update and the ``deliver`` signal of ``AgentWorkflow``."""

    event: InboundEvent


class ReceiptStatus(StrEnum):
    """Where an event stands: ``accepted`` (queued, fire-and-forget) or ``completed``."""

    COMPLETED = "completed"
    ACCEPTED = "accepted"


class Outcome(StrEnum):
    """How an activation ended.

    ``degraded``: the agent spoke, but its reply is the safe fallback because the model provider
    failed (the marker's ``reason`` says how). Values are only ever added, never renamed:
    recorded histories and stored markers carry them.
    """

    SPOKE = "spoke"
    SILENT = "silent"
    FAILED = "failed"
    DEGRADED = "degraded"


class CompletionMarker(Wire):
    """Short-lived session state recording how the run for one event ended (Appendix B).

    Request/reply surfaces poll this marker instead of inferring failure from silence.
    """

    event_id: Ulid
    activation_id: Ulid | None = None
    conversation_id: Ulid | None = None
    outcome: Outcome
    text: str | None = Field(default=None, description="The transmitted reply, if any.")
    reason: str | None = Field(
        default=None, description="Why the agent stayed silent, failed or degraded."
    )
    degraded: bool = Field(default=False, description="The reply is the safe fallback.")
    completed_at: datetime
    expires_at: datetime


class Receipt(Wire):
    """Result of ``submit``: the event's completion marker.

    Submitting the same event again returns the same receipt; the agent replies once.
    """

    event_id: Ulid
    agent: AgentHandle
    status: ReceiptStatus
    marker: CompletionMarker | None = None


class MarkerQuery(Wire):
    """Input of the ``marker`` query."""

    event_id: Ulid


class MarkerAnswer(Wire):
    """Result of the ``marker`` query: ``None`` while the event is pending or unknown."""

    marker: CompletionMarker | None = None
    pending: bool = False
