"""Inbound events, receipts and completion markers: what channel adapters exchange with agents."""

from __future__ import annotations

import hashlib
from contextvars import ContextVar
from enum import StrEnum
from typing import Annotated, Any, ClassVar, Literal, Self

from pydantic import (
    AwareDatetime,
    BaseModel,
    ConfigDict,
    Field,
    ModelWrapValidatorHandler,
    SerializerFunctionWrapHandler,
    StringConstraints,
    WithJsonSchema,
    field_validator,
    model_serializer,
    model_validator,
)
from pydantic_core import PydanticCustomError

from schemas.channel_names import ChannelName
from schemas.ids import AgentHandle, ConversationId, Ulid
from schemas.text import MessageText, Name, unstorable

__all__ = ["Name"]  # re-exported: models across schemas/ take it from here


def _storable(value: object) -> bool:
    """Whether every string inside ``value`` (keys too) can be stored: the common case, fast."""
    # Iterative, so a hostile 10,000-deep payload cannot exhaust the stack; no paths are built
    # until a string fails (first_unstorable then walks again to name it).
    stack: list[object] = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            if unstorable(item) is not None:
                return False
        elif isinstance(item, dict):
            for key in item:
                if isinstance(key, str) and unstorable(key) is not None:
                    return False
            stack.extend(item.values())
        elif isinstance(item, (list, tuple)):
            stack.extend(item)
    return True


def first_unstorable(value: object, path: str) -> tuple[str, str] | None:
    """The first string inside ``value`` that cannot be stored: its path and the reason."""
    if _storable(value):
        return None
    # Iterative, so a hostile 10,000-deep payload cannot exhaust the stack.
    stack: list[tuple[object, str]] = [(value, path)]
    while stack:
        item, where = stack.pop()
        if isinstance(item, str):
            problem = unstorable(item)
            if problem is not None:
                return where, problem
        elif isinstance(item, dict):
            for key, inner in item.items():
                name = f"{where}.{key}" if where else str(key)
                if isinstance(key, str) and (problem := unstorable(key)) is not None:
                    return f"{where or 'payload'} key {key!r}", problem
                stack.append((inner, name))
        elif isinstance(item, (list, tuple)):
            stack.extend(
                (inner, f"{where}.{i}" if where else str(i)) for i, inner in enumerate(item)
            )
    return None


_WALKED: ContextVar[bool] = ContextVar("persyn_wire_walked", default=False)
"""Set while a wire model validates an input it walked whole: the models nested in it, which
pydantic validates within that call, do not walk their part again (each level of nesting
walked the same strings once more)."""


class Wire(BaseModel):
    """Base of every wire model.

    Unknown fields are refused so typos surface at once, and no string anywhere in the input
    (a field, a dictionary key, an item of a list) may hold what PostgreSQL or JSON cannot
    (``schemas.text.unstorable``): such a value is refused at the door, naming its field,
    instead of failing every attempt of the step that stores it.
    """

    model_config = ConfigDict(extra="forbid", frozen=False)

    @model_validator(mode="wrap")
    @classmethod
    def _storable(cls, data: object, handler: ModelWrapValidatorHandler[Self]) -> Self:
        if _WALKED.get():  # a wire model inside one whose whole input was walked already
            return handler(data)
        found = first_unstorable(data, "")
        if found is not None:
            where, problem = found
            raise PydanticCustomError(
                "unstorable_text",
                "{where} {problem}",
                {"where": where or "text", "problem": problem},
            )
        walked = _WALKED.set(True)
        try:
            return handler(data)
        finally:
            _WALKED.reset(walked)


class Evolving(Wire):
    """A wire model that leaves out its newer fields while they are unset.

    A worker refuses a field it does not know (``Wire``), and a client or an older run may
    write an input that a worker older than one of its fields reads: naming such a field in
    ``LEFT_OUT_UNSET`` sends it only when it holds a value (anything but its falsy default).
    """

    LEFT_OUT_UNSET: ClassVar[tuple[str, ...]] = ()

    @model_serializer(mode="wrap")
    def _left_out_unset(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        data: dict[str, Any] = handler(self)
        for name in self.LEFT_OUT_UNSET:
            if not getattr(self, name):
                data.pop(name, None)
        return data


class Modality(StrEnum):
    """How an input arrived; everything is normalised to text before the pipeline."""

    TEXT = "text"
    IMAGE = "image"
    AUDIO = "audio"


class Trigger(StrEnum):
    """What started an activation.

    Clients may only send ``message``: the agent refuses any other value in ``submit`` and
    ``deliver``. Heartbeats and reminders enter through the internal ``impulse`` signal, which
    the agent turns into an event on its own channel. The field stays in ``InboundEvent`` so
    recorded histories, whose events carry it, still decode.
    """

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
    channel: ChannelName

    @property
    def key(self) -> str:
        """The channel's unique key, ``service:channel``."""
        return f"{self.service}:{self.channel}"


class Speaker(Wire):
    """Who said something, as the channel knows them."""

    speaker_id: Name
    display_name: Name | None = None


MAX_EVENT_IMAGES = 4
"""Pictures one event may carry (as many as one ``edit_image`` call composites)."""
SENT_IMAGE_NOTE = "[picture sent: image {image_id}]"
"""How a picture a person sent appears in their turn: the ID ``edit_image`` takes."""
MAX_EVENT_RECORDINGS = 2
"""Recordings (voice notes) one event may carry."""
SENT_AUDIO_NOTE = "[recording sent: audio {audio_id}]"
"""How a recording a person sent appears in their turn, before what was heard of it."""


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
    images: list[Ulid] = Field(
        default_factory=list,
        max_length=MAX_EVENT_IMAGES,
        description="Pictures the person sent, each kept for the agent beforehand (a channel "
        "stores it under the agent's images and names it here by its ID); set modality "
        "'image'. The agent sees a note per picture and can edit it with edit_image.",
    )
    recordings: list[Ulid] = Field(
        default_factory=list,
        max_length=MAX_EVENT_RECORDINGS,
        description="Recordings (voice notes) the person sent, each kept for the agent "
        "beforehand and named here by its ID; set modality 'audio'. The agent reads a "
        "transcript of each, or a note that it could not hear it.",
    )
    addressed: bool = Field(
        default=True, description="Whether the message was addressed to the agent."
    )
    trigger: Annotated[
        Trigger,
        # Published as clients may send it; the agent refuses any other value from them.
        WithJsonSchema({"type": "string", "enum": [Trigger.MESSAGE.value]}),
    ] = Field(
        default=Trigger.MESSAGE,
        description="Only 'message' from clients: the agent sets the others on its own impulses.",
    )
    conversation_id: ConversationId | None = Field(
        default=None, description="Continue this open conversation instead of the channel's."
    )
    sent_at: AwareDatetime | None = Field(
        default=None, description="When it was said: ISO 8601 with a time zone."
    )
    stream: bool = Field(
        default=False, description="Stream token deltas over LISTEN/NOTIFY (presentation only)."
    )

    @field_validator("images")
    @classmethod
    def _distinct_images(cls, value: list[str]) -> list[str]:
        if len(set(value)) != len(value):
            raise ValueError("each picture once: an image ID is repeated")
        return value

    @field_validator("recordings")
    @classmethod
    def _distinct_recordings(cls, value: list[str]) -> list[str]:
        if len(set(value)) != len(value):
            raise ValueError("each recording once: an audio ID is repeated")
        return value


def event_digest(event: InboundEvent) -> str:
    """A fingerprint of what an event says, to tell a retry from a reused event ID.

    Computed on the validated event (text already normalised), leaving out ``stream``, which
    only changes how the reply is presented. An event without pictures leaves ``images`` out
    too, so its digest is the one computed before events could carry them (a retry across an
    upgrade is still a retry). So does an event without recordings.
    """
    exclude = {"stream"} if event.images else {"stream", "images"}
    if not event.recordings:
        exclude.add("recordings")
    canonical = event.model_dump_json(exclude=exclude)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()[:32]


def person_text(event: InboundEvent) -> str:
    """The person's turn with a note per picture and recording, saying nothing of either.

    Without either it is the text itself, exactly as recorded before events carried them.
    Admission records what was perceived of each instead (``activities.senses``); this is the
    form runs recorded before admission wrote, and replay.
    """
    notes = [SENT_IMAGE_NOTE.format(image_id=image_id) for image_id in event.images]
    notes += [SENT_AUDIO_NOTE.format(audio_id=audio_id) for audio_id in event.recordings]
    return "\n".join([event.text, *notes]) if notes else event.text


class SubmitEventInput(Wire):
    """Input of the ``submit`` update and the ``deliver`` signal of ``AgentWorkflow``."""

    event: InboundEvent


class ImpulseInput(Wire):
    """Input of the internal ``impulse`` signal: a heartbeat's or reminder's firing.

    Sent only by the deliver activity of the schedule-started workflows. The agent turns it
    into an event on its own channel for that trigger, spoken by its inner voice, so an
    internal trigger never rides on an event a client chose.
    """

    event_id: Ulid
    trigger: Literal[Trigger.HEARTBEAT, Trigger.REMINDER]
    text: MessageText
    at: AwareDatetime


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
    completed_at: AwareDatetime
    expires_at: AwareDatetime


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
