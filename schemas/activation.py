"""``ActivationWorkflow`` and the pipeline steps it runs: context, generate, decide, transmit."""

from __future__ import annotations

from pydantic import AwareDatetime, Field

from schemas.agents import DeliberationMode
from schemas.deliberation import DeliberationResult
from schemas.dialog import DialogTurn
from schemas.events import ChannelRef, CompletionMarker, InboundEvent, Wire
from schemas.ids import AgentHandle, Ulid
from schemas.models import TaskType, TokenUsage
from schemas.streaming import StreamTarget

FALLBACK_REPLY = (
    "I'm having trouble thinking clearly right now, so I'd rather not answer badly. "
    "Give me a moment and ask me again."
)
"""The safe reply when generation fails after its last retry."""


class ActivationInput(Wire):
    """One input for the response pipeline of spec §4."""

    activation_id: Ulid
    agent: AgentHandle
    agent_name: str
    conversation_id: Ulid
    channel: ChannelRef
    event: InboundEvent
    person_id: Ulid
    person_name: str
    participants: list[Ulid] = Field(default_factory=list)
    window_turn_ids: list[Ulid] = Field(
        default_factory=list, description="Recent dialog, oldest first, ending with this input."
    )
    admitted: bool = Field(
        default=False,
        description="Started by the agent after admission (schemas.admission): the turn is "
        "written, the budget asked, and the conversation is told when the exchange ends.",
    )
    prompt: PromptRef | None = Field(
        default=None, description="The prompt assembled at admission, if it was."
    )
    withheld: str | None = Field(
        default=None, description="Why admission found no reply may be generated."
    )
    person_turn: DialogTurn | None = Field(
        default=None,
        description="The person's turn as admission wrote it: the activation hands it to its "
        "conversation with the exchange's end (runs before told the conversation separately).",
    )
    deliberation: DeliberationMode | None = Field(
        default=None,
        description="The agent's deliberation mode as admission read it; None: the plan reads "
        "it (activations started before, or by a conversation).",
    )
    shape: int = Field(
        default=0,
        ge=0,
        description="The patches its agent started it with (workflows/pipeline/shape.py): a "
        "run of shape N takes every patch folded at N or before without writing a marker.",
    )


class ActivationResult(Wire):
    """How the pipeline ended and the turn it added to the dialog, if it spoke."""

    marker: CompletionMarker
    reply: DialogTurn | None = None
    deliberation: DeliberationResult | None = Field(
        default=None,
        description="What the deferred deliberation concluded, when the activation ran it "
        "itself after its release (runs recorded before ran it as ``DeliberationWorkflow``).",
    )


class ActivationFinished(Wire):
    """Signal from an activation to its agent: the event left the critical section."""

    marker: CompletionMarker


class DoneForThem(Wire):
    """Something the platform did at the person's request this turn, said two ways."""

    note: str = Field(max_length=4000, description="For the prompt: what was done, to tell them.")
    confirmation: str = Field(
        max_length=4000, description="For the person, in the agent's voice: what was done."
    )
    answers: bool = Field(
        default=False,
        description="The confirmation answers their message in full (the time they asked "
        "for): plans that confirm without the model send it instead of asking the model.",
    )


class AssembleContextInput(Wire):
    """Input of context assembly."""

    activation_id: Ulid
    agent: AgentHandle
    conversation_id: Ulid
    channel: ChannelRef
    event: InboundEvent
    person_id: Ulid
    participants: list[Ulid] = Field(default_factory=list)
    window_turn_ids: list[Ulid] = Field(default_factory=list)
    now: AwareDatetime
    task: TaskType = TaskType.RESPOND
    opening_turn_ids: list[Ulid] = Field(
        default_factory=list,
        max_length=20,
        description="The conversation's first turns, pinned, when not in the window.",
    )
    done: list[DoneForThem] = Field(
        default_factory=list,
        max_length=8,
        description="What the platform did at the person's request this turn (a reminder set).",
    )


class ContextPart(Wire):
    """How much one context source contributed, for the Web UI and traces (not its text)."""

    source: str
    tokens: int
    items: int = 0


class PromptRef(Wire):
    """A prompt stored in PostgreSQL; history carries only its ID and shape."""

    prompt_id: Ulid
    task: TaskType
    token_estimate: int
    parts: list[ContextPart] = Field(default_factory=list)


class GenerateInput(Wire):
    """Input of the generate activity."""

    prompt: PromptRef
    stream: StreamTarget | None = None


class Generation(Wire):
    """A candidate response."""

    text: str
    model: str
    provider: str
    finish_reason: str | None = None
    usage: TokenUsage = Field(default_factory=TokenUsage)


class DraftRef(Wire):
    """A reply draft stored in PostgreSQL (``drafts``); history carries its ID and size only."""

    draft_id: Ulid
    chars: int = Field(ge=0)


class Draft(Wire):
    """A candidate response moving through the pipeline.

    With ``ref`` set the text stays in PostgreSQL and ``text`` is empty: each step passes the
    reference and its activity loads the text. Activations recorded before drafts carry text.
    """

    text: str
    degraded: bool = Field(default=False, description="The safe fallback, not a generation.")
    model: str | None = None
    ref: DraftRef | None = None

    @property
    def draft_id(self) -> str | None:
        """The stored draft's ID, if the text stays in PostgreSQL."""
        return self.ref.draft_id if self.ref is not None else None


class Decision(Wire):
    """The decide step's verdict; silence is an outcome with a reason, not an error."""

    speak: bool
    reason: str


class TransmitInput(Wire):
    """Input of transmit: the reply to send on the originating channel."""

    activation_id: Ulid
    event_id: Ulid
    agent: AgentHandle
    agent_name: str
    conversation_id: Ulid
    channel: ChannelRef
    turn_id: Ulid
    text: str = ""
    draft_id: Ulid | None = Field(
        default=None, description="The reply's stored draft (then ``text`` is empty)."
    )
    at: AwareDatetime


class Transmission(Wire):
    """The recorded reply turn; ``duplicate`` when a retry found it already sent."""

    turn: DialogTurn
    duplicate: bool = False


class SendReplyInput(Wire):
    """Input of the send step: transmit the reply, then record how the event ended, at once."""

    transmit: TransmitInput
    trigger: str
    marker: CompletionMarker = Field(
        description="The completion marker to record; its text is the transmitted turn's."
    )


class SentReply(Wire):
    """The recorded reply turn and the marker recorded with it."""

    turn: DialogTurn
    marker: CompletionMarker


class RecordOutcomeInput(Wire):
    """Input of the record step: persist the completion marker and the activation's outcome."""

    agent: AgentHandle
    trigger: str
    marker: CompletionMarker
