"""Outbound delivery and pacing: the delivery workflow's wire models and the pacing settings.

One ``DeliveryWorkflow`` per outbox row carries the message to its channel's adapter. On paced
channels (by default those between agents) it first asks for pacing: the channel's rolling
token budget (the primary defence against two agents talking forever), a turn limit, the
minimum interval, a listening period and a backoff when exchanges accelerate; the workflow adds
a random delay (``workflow.random``) and waits on a durable timer. The budget counts model
tokens from the usage ledger, and an activation on a paced channel asks it before generating
(``channels.afford_reply``), so no reply is generated once the budget is spent.
"""

from __future__ import annotations

from enum import StrEnum

from pydantic import AwareDatetime, BaseModel, ConfigDict, Field

from schemas.events import ChannelRef, Wire
from schemas.ids import AgentHandle, Ulid

BUDGET_EXHAUSTED = "token budget exhausted"
"""How every refusal for a spent token budget begins (a follower tells it from silence)."""


class DeliveryStatus(StrEnum):
    """Where an outbox row's delivery stands (stored; values are only ever added)."""

    PENDING = "pending"
    DELIVERED = "delivered"
    AWAITING_PICKUP = "awaiting_pickup"
    """Kept for a pull channel's people, until a client shows it."""
    FAILED = "failed"
    BLOCKED = "blocked"
    """Never sent: pacing refused it (budget or turn limit exhausted); ``last_error`` says why."""


class PacingSettings(BaseModel):
    """Pacing of one channel (``PERSYN_PACING__*``; per agent and channel: ``persyn pacing``).

    Every field may be overridden per agent, for all its channels or for one.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    paced_services: list[str] = Field(
        default_factory=lambda: ["agent"],
        description="Services whose messages are paced (default: agent-to-agent only).",
    )
    budget_tokens: int = Field(
        default=40000,
        ge=0,
        description="Model tokens (input and output of every call, from the usage ledger) the "
        "agent may spend on one channel per window; once spent, no reply is generated and no "
        "message sent there.",
    )
    window_seconds: float = Field(
        default=3600.0, gt=0, allow_inf_nan=False, description="The budget's rolling window."
    )
    max_messages: int | None = Field(
        default=None, ge=1, description="At most this many messages per channel per window."
    )
    min_interval_seconds: float = Field(
        default=5.0, ge=0, allow_inf_nan=False, description="Least time between two messages."
    )
    listen_seconds: float = Field(
        default=2.0,
        ge=0,
        allow_inf_nan=False,
        description="Listening period before a message goes out.",
    )
    jitter_seconds: float = Field(
        default=3.0, ge=0, allow_inf_nan=False, description="Upper bound of the random delay."
    )
    acceleration_factor: float = Field(
        default=2.0,
        ge=1.0,
        allow_inf_nan=False,
        description="The interval is multiplied by this for each step the exchange sped up.",
    )
    max_wait_seconds: float = Field(
        default=300.0, ge=0, allow_inf_nan=False, description="Longest pacing wait."
    )


class DeliverySettings(BaseModel):
    """How long delivery keeps trying (``PERSYN_DELIVERY__*``)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    give_up_seconds: float = Field(
        default=3600.0,
        gt=0,
        allow_inf_nan=False,
        description="After this long trying, a delivery is recorded as failed.",
    )
    sweep_after_seconds: float = Field(
        default=30.0,
        ge=0,
        allow_inf_nan=False,
        description="A pending row this old is given a delivery run by the worker's sweep.",
    )
    sweep_every_seconds: float = Field(
        default=30.0,
        gt=0,
        allow_inf_nan=False,
        description="How often each worker sweeps for pending rows without a delivery run.",
    )


class DeliveryInput(Wire):
    """Input of ``DeliveryWorkflow``: the outbox row to deliver."""

    message_id: Ulid
    agent: AgentHandle
    channel: ChannelRef
    unprompted: bool = False
    give_up_seconds: float = Field(default=3600.0, gt=0)


class DeliveryResult(Wire):
    """How a delivery ended."""

    message_id: Ulid
    status: DeliveryStatus
    reason: str | None = None


class PaceInput(Wire):
    """Input of ``channels.pace``."""

    message_id: Ulid


class AffordReplyInput(Wire):
    """Input of ``channels.afford_reply``: may this activation generate a reply on its channel?"""

    agent: AgentHandle
    channel: ChannelRef
    activation_id: Ulid


class Affordance(Wire):
    """Whether a reply may be generated; ``withheld`` says why not (the budget is spent)."""

    withheld: str | None = None


class PaceDecision(Wire):
    """Whether a message may go out, and how long pacing holds it first."""

    blocked: bool = False
    reason: str | None = None
    wait_seconds: float = Field(default=0.0, ge=0)
    jitter_seconds: float = Field(default=0.0, ge=0)
    """Upper bound of the random delay the workflow adds (``workflow.random``)."""


class DeliverInput(Wire):
    """Input of ``channels.deliver``: one attempt for the row."""

    message_id: Ulid


class DeliveryAttempt(Wire):
    """What an attempt achieved (failures are raised, so Temporal retries them)."""

    status: DeliveryStatus
    external_id: str | None = None


class SettleDeliveryInput(Wire):
    """Input of ``channels.settle``: record a delivery that gave up."""

    message_id: Ulid
    status: DeliveryStatus
    reason: str


class DeliverySettled(Wire):
    """The recorded state."""

    status: DeliveryStatus
    at: AwareDatetime | None = None
