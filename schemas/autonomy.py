"""Autonomy on the wire: reminders, the heartbeat, goals, quick facts and their settings.

Reminders and heartbeats are Temporal Schedules; their durable intent (what the agent asked
for, whether the operator deleted the heartbeat) lives in PostgreSQL, so a restart or a
redeploy can never resurrect what was cancelled or deleted.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Literal

from pydantic import AwareDatetime, BaseModel, ConfigDict, Field

from schemas.events import ChannelRef, ImpulseInput, InboundEvent, Speaker, Trigger, Wire
from schemas.ids import AgentHandle, Ulid

SELF_SERVICE = "self"
"""The service of the agent's own channels: no person is on the other end."""

REFLECTION_CHANNEL = "reflection"
"""Where heartbeats run: the agent's self-reflection conversation."""

REMINDER_CHANNEL = "reminders"
"""Where reminders fire: the objectives the agent set for itself."""


def impulse_channel(trigger: Trigger) -> ChannelRef:
    """The agent's own channel for an impulse: reflection for heartbeats, else reminders."""
    name = REFLECTION_CHANNEL if trigger is Trigger.HEARTBEAT else REMINDER_CHANNEL
    return ChannelRef(service=SELF_SERVICE, channel=name)


def impulse_event(impulse: ImpulseInput) -> InboundEvent:
    """The event an impulse becomes: on the agent's own channel, spoken by its inner voice.

    Built by the agent workflow (the only place an internal trigger is set), so neither the
    channel nor the trigger of a self-initiated activation is ever chosen by a client.
    """
    return InboundEvent(
        event_id=impulse.event_id,
        channel=impulse_channel(impulse.trigger),
        speaker=Speaker(speaker_id="self", display_name="Inner voice"),
        text=impulse.text,
        trigger=impulse.trigger,
        sent_at=impulse.at,
    )


class AutonomySettings(BaseModel):
    """Bounds and cadences of the tool loop, reminders and heartbeat (``PERSYN_AUTONOMY__*``)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    max_tool_rounds: int = Field(
        default=6, ge=0, le=50, description="Model turns that may call tools before it must answer."
    )
    tool_timeout_seconds: float = Field(default=30.0, gt=0, le=600)
    tool_result_max_chars: int = Field(default=16_000, ge=200, le=200_000)
    heartbeat_interval_minutes: float = Field(default=60.0, ge=1, le=7 * 24 * 60)
    heartbeat_jitter_minutes: float = Field(default=5.0, ge=0, le=24 * 60)
    heartbeat_memories: int = Field(
        default=20, ge=1, le=200, description="Recent memories a beat's self-assessment reviews."
    )
    reminder_min_interval_minutes: float = Field(
        default=5.0, ge=1, description="Shortest recurrence a reminder may have."
    )
    reminder_max_horizon_days: int = Field(
        default=3660, ge=1, description="Farthest ahead a reminder may be set."
    )
    max_reminders: int = Field(default=100, ge=1, description="Active reminders per agent.")
    max_open_goals: int = Field(default=50, ge=1)
    max_facts_per_subject: int = Field(default=100, ge=1)
    goal_stall_days: float = Field(
        default=7.0, gt=0, le=365, description="An open goal unmoved this long shows as stalled."
    )


class ReminderKind(StrEnum):
    """Fires once, or rolls forward."""

    ONE_SHOT = "one_shot"
    RECURRING = "recurring"


class ReminderStatus(StrEnum):
    """Where a reminder stands. Only ``active`` ones have a schedule that fires again."""

    ACTIVE = "active"
    DONE = "done"
    CANCELLED = "cancelled"
    DUE_WHILE_DORMANT = "due_while_dormant"
    """A one-shot reminder that came due while the agent slept (its heartbeat deleted): held,
    undelivered, until the agent wakes (``persyn heartbeat restore``); then delivered and done."""


DORMANT_REASON = "due while dormant: held until the agent wakes (persyn heartbeat restore)"
"""Why a reminder's firing was not delivered while the agent slept; it is delivered on waking."""


class Recurrence(Wire):
    """A recurrence: every N minutes (from ``start``), or a five-field cron expression."""

    every_minutes: float | None = Field(default=None, gt=0)
    cron: str | None = Field(default=None, max_length=120)
    timezone: str = "UTC"


class ReminderPublic(Wire):
    """A reminder as the agent's tools and the operator's CLI show it."""

    reminder_id: Ulid
    agent: AgentHandle
    objective: str
    kind: ReminderKind
    status: ReminderStatus
    at: AwareDatetime | None = Field(default=None, description="When a one-shot reminder fires.")
    recurrence: Recurrence | None = None
    created_at: AwareDatetime
    updated_at: AwareDatetime
    fired: int = 0
    last_fired_at: AwareDatetime | None = None
    next_fire_at: AwareDatetime | None = None
    for_person: Ulid | None = Field(
        default=None, description="The person it is sent to when it fires (they asked for it)."
    )
    for_channel: str | None = Field(
        default=None, description="The channel (service:channel) it is sent to them on."
    )


class HeartbeatState(StrEnum):
    """The heartbeat's durable state: only an explicit restore leaves ``deleted``."""

    ACTIVE = "active"
    DELETED = "deleted"


class HeartbeatRecord(Wire):
    """The heartbeat's durable record."""

    agent: AgentHandle
    state: HeartbeatState
    interval_minutes: float
    bootstrapped_at: AwareDatetime
    deleted_at: AwareDatetime | None = None
    restored_at: AwareDatetime | None = None


class HeartbeatStatus(Wire):
    """The record and what the schedule says."""

    record: HeartbeatRecord | None
    scheduled: bool = False
    paused: bool = False
    next_fire_at: AwareDatetime | None = None
    recent_fires: list[AwareDatetime] = Field(default_factory=list)
    held_reminders: int = Field(
        default=0, ge=0, description="Reminders that came due while asleep, held until it wakes."
    )


class GoalStatus(StrEnum):
    """A goal's life: open, being pursued, then achieved, abandoned or retired."""

    OPEN = "open"
    IN_PROGRESS = "in_progress"
    ACHIEVED = "achieved"
    ABANDONED = "abandoned"
    RETIRED = "retired"

    @property
    def closed(self) -> bool:
        """Whether the goal no longer stands."""
        return self in {GoalStatus.ACHIEVED, GoalStatus.ABANDONED, GoalStatus.RETIRED}


class GoalKind(StrEnum):
    """A goal is reached; an interest is pursued without an end."""

    GOAL = "goal"
    INTEREST = "interest"


CONSTITUTIONAL = ("title", "description", "progress_signal", "kind")
"""The fields that say what a goal is: set by the operator (or by the agent as it creates the
goal), changed afterwards only by the operator. A change the agent asks for is a request."""


class GoalPublic(Wire):
    """A goal: what it is (constitutional) and how it is going (operational, the agent's own)."""

    goal_id: Ulid
    description: str
    status: GoalStatus
    created_at: AwareDatetime
    updated_at: AwareDatetime
    note: str | None = Field(default=None, description="Latest progress note or outcome.")
    title: str | None = Field(default=None, description="Its name, short.")
    kind: GoalKind = GoalKind.GOAL
    progress_signal: str | None = Field(default=None, description="How progress shows.")
    set_by: Literal["operator", "agent"] = "agent"
    state: str | None = Field(default=None, description="Where it stands now.")
    next_step: str | None = None
    last_step: str | None = None
    last_step_at: AwareDatetime | None = None
    blocked_by: str | None = None
    moved_at: AwareDatetime | None = Field(
        default=None, description="When its state last moved: a goal long unmoved is stalled."
    )


class GoalRequestStatus(StrEnum):
    """An owner request waits for the operator, who approves or refuses it."""

    PENDING = "pending"
    APPROVED = "approved"
    REFUSED = "refused"


class GoalRequest(Wire):
    """A change to a constitutional field the agent asked for."""

    request_id: Ulid
    goal_id: Ulid
    field: Literal["title", "description", "progress_signal", "kind"]
    value: str
    reason: str | None = None
    status: GoalRequestStatus
    created_at: AwareDatetime
    decided_at: AwareDatetime | None = None
    decided_by: str | None = None


class QuickFact(Wire):
    """One key/value of the scratchpad about a person (``subject`` = their ID) or ``self``."""

    subject: str
    key: str
    value: str
    updated_at: AwareDatetime


class FiringKind(StrEnum):
    """What started a self-initiated activation."""

    HEARTBEAT = "heartbeat"
    REMINDER = "reminder"


class FiringInput(Wire):
    """Input of the schedule-started workflows: whose schedule fired (and which reminder)."""

    agent: AgentHandle
    reminder_id: Ulid | None = None


class Firing(Wire):
    """A firing claimed for delivery: its impulse's event ID and text, or why it is skipped."""

    deliver: bool
    event_id: Ulid | None = None
    text: str = ""
    one_shot: bool = False
    reason: str | None = None


class FiringResult(Wire):
    """How a schedule-started workflow ended."""

    delivered: bool
    event_id: Ulid | None = None
    reason: str | None = None


class ClaimFiringInput(Wire):
    """Claim one firing; ``event_id`` is made by the workflow, so a retry claims the same one."""

    kind: FiringKind
    agent: AgentHandle
    reminder_id: Ulid | None = None
    event_id: Ulid
    fired_at: AwareDatetime


class DeliverImpulseInput(Wire):
    """Deliver a self-initiated impulse to the agent's inbox (signal-with-start)."""

    kind: FiringKind
    agent: AgentHandle
    event_id: Ulid
    text: str
    at: AwareDatetime


class RetireReminderInput(Wire):
    """A one-shot reminder fired: remove its schedule and mark it done."""

    agent: AgentHandle
    reminder_id: Ulid


class AutonomyEntry(Wire):
    """One self-initiated activation and what came of it (introspection)."""

    kind: FiringKind
    fired_at: AwareDatetime
    event_id: Ulid
    reminder_id: Ulid | None = None
    objective: str | None = None
    outcome: str | None = None
    said: str | None = None
    tools: list[str] = Field(default_factory=list)
    assessment: str | None = None
