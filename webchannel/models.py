"""What the web channel's endpoints take and return (documented in its OpenAPI document)."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, WithJsonSchema

from schemas.channel_names import channel_name_schema, check_channel_name
from schemas.events import (
    MAX_EVENT_IMAGES,
    MAX_EVENT_RECORDINGS,
    CompletionMarker,
    ReceiptStatus,
    Speaker,
)
from schemas.ids import ULID_PATTERN
from schemas.text import MessageText
from webchannel.tenancy import MAX_NAME_CHARS

WebChannelName = Annotated[
    str, AfterValidator(check_channel_name), channel_name_schema(MAX_NAME_CHARS)
]
"""A channel name as an integrator sends it: the one rule, within what the tenant prefix leaves."""

EventId = Annotated[str, WithJsonSchema({"type": "string", "pattern": ULID_PATTERN})]
"""An event ID as published; the route checks it, so a bad one is named as the event ID."""


class WebMessage(BaseModel):
    """A message for an agent, posted by an integrator or the chat page."""

    model_config = ConfigDict(extra="forbid")

    event_id: EventId | None = Field(
        default=None,
        description="A ULID you generate once per message: the idempotency key. Omit it and "
        "the service generates one (then a retry is a new message).",
    )
    channel: WebChannelName = Field(
        description="The room, thread or inbox on the web service (`web:<channel>`); memory is "
        "compartmentalised by channel."
    )
    speaker: Speaker = Field(description="Who said it, as your system knows them.")
    text: MessageText = Field(description="What was said: 1-32,000 characters, no NUL.")
    # Strict: JSON's true and false only, as the schema says (not 0, 1 or "yes").
    addressed: bool = Field(
        default=True,
        strict=True,
        description="False when the agent merely overheard it (group chats).",
    )
    stream: bool = Field(
        default=False,
        strict=True,
        description="Stream the reply's token deltas to the channel's SSE stream as it is "
        "written (the reply itself is always sent there).",
    )
    images: list[EventId] = Field(
        default_factory=list,
        max_length=MAX_EVENT_IMAGES,
        json_schema_extra={"uniqueItems": True},
        description="Pictures you uploaded (POST .../media, kind image), by media ID: the "
        "agent reads a description of each (with a vision model configured) or a note that "
        "it cannot see it.",
    )
    recordings: list[EventId] = Field(
        default_factory=list,
        max_length=MAX_EVENT_RECORDINGS,
        json_schema_extra={"uniqueItems": True},
        description="Recordings you uploaded (POST .../media, kind audio), by media ID: the "
        "agent reads a transcript of each, or a note that it cannot hear it.",
    )


class WebReceipt(BaseModel):
    """The answer to a posted message: accepted (202), or completed when the caller waited."""

    event_id: str
    agent: str
    status: ReceiptStatus
    marker: CompletionMarker | None = Field(
        default=None, description="How the agent answered (only once completed)."
    )
    marker_url: str = Field(description="Where to GET the completion marker.")
    stream_url: str = Field(description="The channel's server-sent-events stream.")


class Problem(BaseModel):
    """Every refusal: one line that names what to fix."""

    detail: str


def inline_schema(model: type[BaseModel]) -> dict[str, Any]:
    """``model``'s JSON Schema with every ``$defs`` entry written in place.

    A schema placed by hand in an OpenAPI document (a body the route reads itself) cannot
    point at ``#/$defs/...``: that is not where the document keeps them. The models here nest
    without cycles, so writing each definition where it is used always ends.
    """
    schema = model.model_json_schema()
    defs: dict[str, Any] = schema.pop("$defs", {})
    prefix = "#/$defs/"

    def resolve(node: Any) -> Any:
        if isinstance(node, dict):
            ref = node.get("$ref")
            if isinstance(ref, str) and ref.startswith(prefix):
                rest = {k: v for k, v in node.items() if k != "$ref"}
                return {**resolve(defs[ref.removeprefix(prefix)]), **resolve(rest)}
            return {key: resolve(value) for key, value in node.items()}
        if isinstance(node, list):
            return [resolve(item) for item in node]
        return node

    resolved: dict[str, Any] = resolve(schema)
    return resolved
