"""Agents as configured records and as the long-lived ``AgentWorkflow``'s state."""

from __future__ import annotations

from enum import StrEnum

from pydantic import AwareDatetime, Field

from schemas.events import CompletionMarker, Evolving, InboundEvent, Name, Wire
from schemas.ids import AgentHandle, Ulid
from schemas.runs import HISTORY_LIMIT
from schemas.text import PersonaText
from schemas.voice import CallBegan


class DeliberationMode(StrEnum):
    """When counter-perspective critique and refinement land (spec §4, inline vs. deferred)."""

    INLINE = "inline"
    DEFERRED = "deferred"
    OFF = "off"


class AgentConfig(Wire):
    """Per-agent settings kept with the agent's record."""

    timezone: str = Field(default="UTC", description="IANA zone for the date/time line.")
    idle_minutes: float = Field(default=30.0, gt=0, le=7 * 24 * 60)
    deliberation: DeliberationMode = DeliberationMode.DEFERRED


class AgentCreate(Wire):
    """What an operator supplies to create an agent."""

    handle: AgentHandle
    name: Name
    persona: PersonaText
    config: AgentConfig = Field(default_factory=AgentConfig)


class AgentPublic(Wire):
    """An agent as the CLI and integrators see it."""

    handle: AgentHandle
    name: str
    persona: str
    config: AgentConfig
    created_at: AwareDatetime


class OpenConversation(Wire):
    """A conversation the agent holds open on one channel."""

    conversation_id: Ulid
    channel_key: str
    opened_at: AwareDatetime


class InFlight(Wire):
    """The event inside the agent's critical section and where it was sent."""

    event: InboundEvent
    conversation_id: Ulid
    dispatched_at: AwareDatetime
    activation_id: Ulid | None = Field(
        default=None,
        description="The activation the agent assigned; only its completion is accepted.",
    )
    admitted: bool = Field(
        default=False,
        description="Admitted by the agent (schemas.admission): its turn is written and the agent "
        "started its activation, so its conversation closing does not send it elsewhere.",
    )


class CallHold(Wire):
    """A live call that holds, or waits for, its agent's lock (docs/channels.md, Live voice)."""

    call: CallBegan
    asked_at: AwareDatetime = Field(description="When the call asked for the lock.")
    since: AwareDatetime | None = Field(
        default=None,
        description="When the call took the lock (the event in flight then had ended); "
        "``None`` while it waits.",
    )
    heard_at: AwareDatetime = Field(
        description="The last sign of the call in the inbox: its start, or one of its turns "
        "taken or ended. The hold lapses ``idle_timeout_s`` and the grace past it."
    )
    channel_key: str | None = Field(
        default=None,
        description="The call's channel once known (a placed call's tenant is named by its "
        "first turn).",
    )

    def describe(self) -> str:
        """The hold in words, as ``persyn status`` and the Web UI say it."""
        who = self.call.person_name or self.call.number or "someone"
        return f"on a call with {who} (call {self.call.call_id})"


class AgentState(Wire):
    """Everything ``AgentWorkflow`` holds; carried whole through continue-as-new."""

    handle: AgentHandle
    queue: list[InboundEvent] = Field(default_factory=list)
    in_flight: InFlight | None = None
    open: dict[str, OpenConversation] = Field(
        default_factory=dict, description="Channel key to its open conversation."
    )
    markers: dict[str, CompletionMarker] = Field(
        default_factory=dict, description="Recent completion markers by event ID (they expire)."
    )
    refused: dict[str, CompletionMarker] = Field(
        default_factory=dict,
        description="Failed markers of delivered events that did not validate, by event ID; "
        "a valid event with the same ID replaces one.",
    )
    digests: dict[str, str] = Field(
        default_factory=dict,
        description="Fingerprint of each event ID taken (kept as long as its marker), so an "
        "ID reused for a different event is refused as a conflict.",
    )
    handled: int = 0
    since_continued: int = 0
    received: dict[str, AwareDatetime] = Field(
        default_factory=dict,
        description="When each queued or in-flight event was taken, by event ID (for the age "
        "of the oldest waiting event).",
    )
    calls: list[CallHold] = Field(
        default_factory=list,
        description="Live calls that asked for the lock, in the order they asked: the first "
        "holds it once its ``since`` is set; only its channel's events are dispatched then.",
    )


UP_FRONT_SHAPE = 1
"""From this shape on a run takes, without asking, every patch a run asks up front."""

LOCK_BY_RUN_LIMIT_SHAPE = 2
"""From this shape on a run takes ``lock-bounded-by-run-limit`` without asking."""

AGENT_SHAPE = 2
"""The shape an agent's run continues as new with (``workflows/agent.py``): from 1, every
patch asked up front; from 2, also ``lock-bounded-by-run-limit``."""


class AgentWorkflowInput(Evolving):
    """Input of ``AgentWorkflow``: a handle, plus the state when continuing as new."""

    # A client's start never names a shape: only a continuing run sets it.
    LEFT_OUT_UNSET = ("shape",)

    handle: AgentHandle
    state: AgentState | None = None
    continue_as_new_after: int | None = Field(
        default=None,
        gt=0,
        description="Also continue as new after this many events (operations and tests); "
        "by default only when Temporal suggests it.",
    )
    history_limit: int = Field(
        default=HISTORY_LIMIT,
        ge=100,
        description="Continue as new once the run's history holds this many events: a "
        "restarted worker replays each open agent's history before it answers for it.",
    )
    shape: int = Field(
        default=0,
        ge=0,
        le=AGENT_SHAPE,
        description="Which of the agent's patches the run takes without asking: set by a run "
        "continuing as new; a run started without it asks each, up front.",
    )


class AgentStatusQuery(Wire):
    """Input of the ``status`` query; optional (send no input, or ``{}``)."""


class InFlightStatus(Wire):
    """The event in an agent's critical section, as the ``status`` query reports it."""

    event_id: Ulid
    received_at: AwareDatetime | None = Field(default=None, description="When it was taken.")
    step: str = Field(description="Where it is: a step of the agent's own, or its activation.")
    attempt: int = Field(default=1, ge=1, description="The step's attempt running now.")
    step_since: AwareDatetime | None = Field(
        default=None, description="When the step's first attempt began."
    )
    last_error: str | None = Field(
        default=None, description="Why the step's previous attempt failed, if one did."
    )
    conversation_id: Ulid | None = None
    activation_id: Ulid | None = None


class AgentStatus(Wire):
    """Result of the ``status`` query."""

    handle: AgentHandle
    queued: int
    in_flight_event: str | None
    open_conversations: list[OpenConversation]
    handled: int
    starting_conversations: int = Field(
        default=0, ge=0, description="Conversations the agent is still starting (normally 0)."
    )
    in_flight: InFlightStatus | None = Field(
        default=None, description="The event in the critical section: its step and attempt."
    )
    oldest_waiting_since: AwareDatetime | None = Field(
        default=None,
        description="When the oldest event still waiting for its marker (queued or in flight) "
        "was taken; its age is how long the inbox has been held.",
    )
    call: CallHold | None = Field(
        default=None,
        description="The live call that holds the lock, or waits to take it once the event in "
        "flight ends (``since`` unset); events on other channels wait until it ends.",
    )
    calls_waiting: int = Field(
        default=0, ge=0, description="Further calls waiting for the lock after that one."
    )
