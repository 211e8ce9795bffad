"""Live voice: the OpenAI-compatible body a voice transport sends, and the call's session.

A voice platform (speech-to-text, text-to-speech, telephony) treats the web channel as its
"custom LLM": every settled spoken turn arrives as a chat-completions request carrying the
platform's stable call identifier. These models check that body at the door and carry a
call's state through its workflow (``workflows/call.py``).
"""

from __future__ import annotations

import unicodedata
from enum import StrEnum
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    SecretStr,
    StringConstraints,
    WithJsonSchema,
)

from schemas.events import ChannelRef, Wire
from schemas.ids import AgentHandle, Ulid
from schemas.text import unstorable

MAX_CALL_MESSAGES = 100
"""Messages one request may carry: the platform resends the whole call's transcript."""

MAX_CALL_MESSAGE_CHARS = 4_000
"""Characters one message of the transcript may hold."""

MAX_CALL_BODY_BYTES = 2 * 1024 * 1024
"""The voice endpoint's body cap: room for the most messages of the longest text allowed."""

_CONTROLS = "\\u0000-\\u0008\\u000B\\u000C\\u000E-\\u001F\\u007F-\\u009F"

CALL_ID_PATTERN = r"^[A-Za-z0-9_.:@+~-]{1,128}$"
"""A transport's call identifier: one path-safe token (Vapi's are UUIDs)."""

CallId = Annotated[str, StringConstraints(pattern=CALL_ID_PATTERN)]
PhoneNumber = Annotated[str, StringConstraints(pattern=r"^\+?[0-9]{3,20}$")]


CALL_SERVICE = "web"
"""Calls arrive through the web service (``persyn serve``)."""

CALL_PREFIX = "call-"
"""A call's channel within its tenant's namespace: ``call-<call id>``."""

MAX_TENANT_CHARS = 64


def call_channel(tenant: str, call_id: str) -> ChannelRef:
    """The channel of call ``call_id`` in ``tenant``'s namespace on the web service."""
    return ChannelRef(service=CALL_SERVICE, channel=f"{tenant}:{CALL_PREFIX}{call_id}")


def on_call_channel(channel: ChannelRef, *, call_id: str, tenant: str) -> bool:
    """Whether ``channel`` is the channel of call ``call_id``.

    ``tenant`` is empty for a call the agent placed, until the transport's first turn names
    it: then any tenant's channel of that call ID is the call's.
    """
    if channel.service != CALL_SERVICE:
        return False
    if tenant:
        return channel.channel == f"{tenant}:{CALL_PREFIX}{call_id}"
    return channel.channel.endswith(f":{CALL_PREFIX}{call_id}")


class CallDirection(StrEnum):
    """Who dialled whom: part of the situation the agent is told."""

    INBOUND = "inbound"
    """The agent picked up a call from this person."""
    OUTBOUND = "outbound"
    """The agent called this person and they answered."""


class _Open(BaseModel):
    """A part of the platform's body: unknown fields are the platform's business, kept out."""

    model_config = ConfigDict(extra="ignore")


def _spoken_text(value: str) -> str:
    problem = unstorable(value)
    if problem is not None:
        raise ValueError(problem)
    for ch in value:
        if unicodedata.category(ch) == "Cc" and ch not in "\t\n\r":
            raise ValueError(f"contains the control character U+{ord(ch):04X}: remove it")
    return value


SpokenText = Annotated[
    str,
    StringConstraints(max_length=MAX_CALL_MESSAGE_CHARS),
    AfterValidator(_spoken_text),
    WithJsonSchema(
        {
            "type": "string",
            "maxLength": MAX_CALL_MESSAGE_CHARS,
            "pattern": f"^[^{_CONTROLS}]*$",
            "description": "Text without control characters (tab and line breaks allowed).",
        }
    ),
]


class CallMessage(_Open):
    """One message of the transcript the platform resends with every turn."""

    role: Literal["system", "user", "assistant", "tool", "developer", "function"]
    content: SpokenText | None = None


class CallCustomer(_Open):
    """Who is on the other end, as the platform knows them (Vapi's ``call.customer``)."""

    number: PhoneNumber | None = None
    name: Annotated[str, StringConstraints(max_length=200)] | None = None


class CallInfo(_Open):
    """The platform's call object (Vapi's shape): its ID, type and customer."""

    id: CallId | None = None
    type: Annotated[str, StringConstraints(max_length=64)] | None = None
    customer: CallCustomer | None = None


class CallMetadata(_Open):
    """``metadata`` as an integrator fills it when the platform passes it through."""

    call_id: CallId | None = None
    caller: PhoneNumber | None = None
    direction: CallDirection | None = None


class CallCompletionRequest(_Open):
    """An OpenAI chat-completions body, as a voice platform sends it for one turn.

    ``model`` is the platform's own (it names the agent only on the route without a handle).
    The call identifier is read, in order, from the ``x-call-id`` header, ``call.id``,
    ``metadata.call_id`` and ``user``.
    """

    model: Annotated[str, StringConstraints(max_length=200)] | None = None
    messages: list[CallMessage] = Field(min_length=1, max_length=MAX_CALL_MESSAGES)
    stream: bool = False
    user: CallId | None = None
    call: CallInfo | None = None
    metadata: CallMetadata | None = None
    max_tokens: int | None = Field(default=None, ge=1, le=4096)
    temperature: float | None = Field(default=None, ge=0, le=2)

    def call_id(self, header: str | None) -> str | None:
        """The transport's stable call identifier, from the first place that has one."""
        if header:
            return header
        if self.call is not None and self.call.id:
            return self.call.id
        if self.metadata is not None and self.metadata.call_id:
            return self.metadata.call_id
        return self.user

    def caller(self) -> str | None:
        """The other party's number, when the platform says it."""
        if self.call is not None and self.call.customer is not None and self.call.customer.number:
            return self.call.customer.number
        return self.metadata.caller if self.metadata is not None else None

    def caller_name(self) -> str | None:
        """The other party's name, when the platform says it."""
        customer = self.call.customer if self.call is not None else None
        return customer.name if customer is not None else None

    def direction(self) -> CallDirection | None:
        """The direction the platform states, if it states one (Vapi's ``call.type``)."""
        if self.metadata is not None and self.metadata.direction is not None:
            return self.metadata.direction
        kind = (self.call.type or "") if self.call is not None else ""
        if kind.startswith("outbound"):
            return CallDirection.OUTBOUND
        if kind.startswith("inbound"):
            return CallDirection.INBOUND
        return None

    def last_user_text(self) -> str:
        """What the caller said last (the settled turn), stripped."""
        for message in reversed(self.messages):
            if message.role == "user" and message.content and message.content.strip():
                return message.content.strip()
        return ""


class StartCallInput(Wire):
    """Input of ``CallWorkflow``: one call, from its first turn (or its dialling) to hang-up."""

    call_id: CallId
    agent: AgentHandle
    direction: CallDirection
    tenant: str = Field(max_length=MAX_TENANT_CHARS)
    person_id: Ulid | None = None
    person_name: str | None = Field(default=None, max_length=200)
    number: PhoneNumber | None = None
    idle_timeout_s: float = Field(default=600.0, gt=0, le=86_400)


class CallState(Wire):
    """Everything a call's workflow knows, as its ``state`` query returns it."""

    call: StartCallInput
    conversation_id: Ulid | None = None
    turns: int = 0
    pending: list[Ulid] = Field(
        default_factory=list,
        description="The background runs whose conclusions are not yet woven into speech.",
    )
    ended: str | None = Field(default=None, description="Why the call ended, once it has.")


class CallStateQuery(Wire):
    """Input of the ``call_state`` query (nothing to say: the call is the workflow's)."""


class CallTurnSignal(Wire):
    """A settled turn of the call was answered (resets the idle timer; names the conversation)."""

    conversation_id: Ulid | None = None


class CallConclusion(Wire):
    """A background run concluded: its reply (in its outbox row) waits for the next answer.

    Only the run's ID travels, as everywhere in history: its text stays in PostgreSQL.
    """

    activation_id: Ulid


class ConclusionsTaken(Wire):
    """The fast path wove the first ``count`` pending conclusions into speech."""

    count: int = Field(ge=0, le=1000)


class HangUp(Wire):
    """The call ended (the transport said so, or an operator)."""

    reason: str = Field(default="hang-up", max_length=200)


class CallBegan(Wire):
    """Internal: a call started and asks for its agent's lock (sent by its ``CallWorkflow``).

    The agent gives it the lock once the event in flight, if any, has ended, and keeps it
    until ``CallEnded``, or until the call has been silent for ``idle_timeout_s`` and
    :data:`HOLD_GRACE_S` more (a call whose workflow could not say it ended).
    """

    call_id: CallId
    tenant: str = Field(
        max_length=MAX_TENANT_CHARS,
        description="The web tenant whose channel the call is on; empty for a call the agent "
        "placed, until the transport's first turn names it.",
    )
    person_name: str | None = Field(default=None, max_length=200)
    number: PhoneNumber | None = None
    idle_timeout_s: float = Field(gt=0, le=86_400)


class CallEnded(Wire):
    """Internal: the call ended and releases its agent's lock (sent by its ``CallWorkflow``)."""

    call_id: CallId
    reason: str = Field(max_length=200)


HOLD_GRACE_S = 120.0
"""How long past a call's idle time, counted from the last sign of the call in its agent's
inbox, the agent keeps the call's hold without hearing that it ended. The call's own idle timer
can start up to ``webchannel.voice.turns.SPOKEN_WAIT_S`` (30 s) after its last turn's run
ended; past the grace the call's workflow is gone (terminated, failed) or its end was lost."""


class CallEventMessage(_Open):
    """One server message of the transport (Vapi's ``message``): only its end is read."""

    type: Annotated[str, StringConstraints(max_length=64)]
    call: CallInfo | None = None
    status: Annotated[str, StringConstraints(max_length=64)] | None = None
    endedReason: Annotated[str, StringConstraints(max_length=200)] | None = None  # noqa: N815


class CallEvent(_Open):
    """What a transport posts to its server URL about a call (Vapi's shape)."""

    message: CallEventMessage

    def ends(self) -> str | None:
        """Why the call ended, when this event says it has."""
        message = self.message
        if message.type == "end-of-call-report" or (
            message.type == "status-update" and message.status == "ended"
        ):
            return message.endedReason or message.type
        return None


class CallEventAnswer(BaseModel):
    """What the voice endpoint did with a transport's event."""

    call_id: str | None = None
    ended: bool = False
    detail: str


class CallRef(Wire):
    """A call a transport placed: its own identifier and what it reported."""

    call_id: CallId
    status: str = Field(default="queued", max_length=64)


def chunk(
    *, completion_id: str, model: str, created: int, text: str | None, finish: str | None
) -> dict[str, Any]:
    """One ``chat.completion.chunk`` of an OpenAI streaming response."""
    delta: dict[str, Any] = {} if text is None else {"role": "assistant", "content": text}
    return {
        "id": completion_id,
        "object": "chat.completion.chunk",
        "created": created,
        "model": model,
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }


class VoiceSettings(BaseModel):
    """Live voice calls (``PERSYN_VOICE__*``, ``[voice]`` in persyn.toml; docs/channels.md)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    allow: list[PhoneNumber] = Field(
        default_factory=list,
        description="Numbers accepted on an inbound call besides the people the agent knows.",
    )
    settle_ms: float = Field(
        default=0.0,
        ge=0,
        le=5_000,
        description="How long a turn waits for a later fragment of the same call before it "
        "is answered; a fragment superseded within it gets an empty answer.",
    )
    prompt_refresh_s: float = Field(
        default=60.0, gt=0, le=3_600, description="Seconds a call's cached system prompt lives."
    )
    prompt_refresh_turns: int = Field(
        default=5, ge=1, le=1_000, description="Turns a call's cached system prompt lives."
    )
    idle_timeout_s: float = Field(
        default=600.0, gt=0, le=86_400, description="A call silent this long has ended."
    )
    fast_timeout_s: float = Field(
        default=4.0, gt=0, le=60, description="The fast model's limit before a holding phrase."
    )
    holding_phrase: str = Field(
        default="Mm-hm, give me a moment.",
        min_length=1,
        max_length=200,
        description="Spoken when the fast model has nothing to say, or fails.",
    )
    vapi_api_key: SecretStr | None = Field(
        default=None, description="Vapi's private key: with it, place_call dials through Vapi."
    )
    vapi_base_url: str = Field(default="https://api.vapi.ai", max_length=500)
    vapi_phone_number_id: str | None = Field(
        default=None, max_length=100, description="The Vapi phone number calls are placed from."
    )
    vapi_assistant_id: str | None = Field(
        default=None, max_length=100, description="The Vapi assistant whose custom LLM is us."
    )
