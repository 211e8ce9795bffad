"""``ConversationWorkflow``'s input, state and messages."""

from __future__ import annotations

from pydantic import AwareDatetime, Field

from schemas.dialog import DialogTurn
from schemas.events import ChannelRef, Evolving, InboundEvent, Wire
from schemas.ids import AgentHandle, Ulid
from schemas.runs import HISTORY_LIMIT


class InboundTurn(Wire):
    """An event routed to a conversation, with its speaker resolved to a person."""

    event: InboundEvent
    person_id: Ulid
    person_name: str
    activation_id: Ulid | None = Field(
        default=None,
        description="The ID the agent assigned to this input's activation (its completion must "
        "carry it); older turns leave it to the conversation.",
    )


class TurnTaken(Wire):
    """Signal from the agent to a conversation: a person's turn was admitted to it."""

    inbound: InboundTurn = Field(description="The event, its person and its activation's ID.")
    turn: DialogTurn = Field(description="The person's turn as written through.")


class ExchangeDone(Wire):
    """Signal from an activation to its conversation: the exchange ended (the reply, if any)."""

    activation_id: Ulid
    event_id: Ulid
    reply: DialogTurn | None = None
    taken: TurnTaken | None = Field(
        default=None,
        description="The person's turn the exchange answered, for a conversation that was not "
        "told of it when it was admitted (it joins the window before the reply).",
    )


class ConversationState(Evolving):
    """The session: verbatim window (source of truth while open) and who took part."""

    LEFT_OUT_UNSET = ("asked_up_front", "idle_timer_kept")

    window: list[DialogTurn] = Field(default_factory=list)
    pending: list[InboundTurn] = Field(default_factory=list)
    participants: list[Ulid] = Field(default_factory=list)
    turns: int = 0
    last_activity: AwareDatetime | None = None
    opened: bool = False
    # Memory formation: where consolidation has got to, and how much was said since.
    consolidated_through: Ulid | None = Field(
        default=None, description="The last turn handed to a consolidation."
    )
    counted_through: Ulid | None = Field(
        default=None, description="The last turn counted in tokens_since_consolidated."
    )
    tokens_since_consolidated: int = 0
    chunk_tokens: int | None = Field(
        default=None, description="Consolidate every so many tokens (loaded once per run)."
    )
    turns_since_consolidated: int = 0
    chunk_turns: int | None = Field(
        default=None, description="...or every so many turns (loaded with chunk_tokens; 0: off)."
    )
    consolidations: int = 0
    asked_up_front: bool = Field(
        default=False,
        description="The run asked its patches up front, or continued one that did: it names "
        "children from turn times, and a run continuing it asks none (workflows/up_front.py).",
    )
    idle_timer_kept: bool = Field(
        default=False,
        description="The run keeps one idle timer across exchanges instead of restarting it "
        "after each (patch ``idle-timer-kept``), or continued one that did.",
    )
    # Admission (schemas/admission.py): the agent writes the turn and starts the activation.
    taken: list[TurnTaken] = Field(
        default_factory=list, description="Turns the agent admitted, not yet taken into the window."
    )
    done: list[ExchangeDone] = Field(
        default_factory=list, description="Exchanges ended, not yet taken into the window."
    )
    awaiting: dict[str, InboundTurn] = Field(
        default_factory=dict, description="Activation ID to the admitted input it answers."
    )
    last_input: Ulid | None = Field(
        default=None, description="The newest person turn this conversation was told of."
    )


class ConversationInput(Wire):
    """Input of ``ConversationWorkflow``."""

    conversation_id: Ulid
    agent: AgentHandle
    agent_name: str
    channel: ChannelRef
    idle_seconds: float = Field(default=1800.0, gt=0)
    window_turns: int = Field(default=40, gt=0, le=500)
    first: InboundTurn | None = None
    state: ConversationState | None = None
    history_limit: int = Field(
        default=HISTORY_LIMIT,
        ge=100,
        description="Continue as new once the run's history holds this many events.",
    )


class ConversationClosed(Wire):
    """Signal from a conversation to its agent: closed, will process nothing more."""

    conversation_id: Ulid
    channel_key: str
    closed_at: AwareDatetime
    reason: str


class WindowQuery(Wire):
    """Input of the ``window`` query."""


class WindowAnswer(Wire):
    """Result of the ``window`` query."""

    conversation_id: Ulid
    window: list[DialogTurn]
    participants: list[Ulid]
    pending: int


class RememberNow(Wire):
    """Update to a conversation: consolidate what was said since the last memory formed."""

    reason: str = Field(min_length=1, max_length=300, description="Who asks, and why.")


class RememberNowResult(Wire):
    """Whether a consolidation started (the turns since the last one, as of now)."""

    started: bool
    detail: str = Field(max_length=300)
