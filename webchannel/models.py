"""What the web channel's endpoints take and return (documented in its OpenAPI document)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from schemas.events import CompletionMarker, ReceiptStatus, Speaker


class WebMessage(BaseModel):
    """A message for an agent, posted by an integrator or the chat page."""

    model_config = ConfigDict(extra="forbid")

    event_id: str | None = Field(
        default=None,
        description="A ULID you generate once per message: the idempotency key. Omit it and "
        "the service generates one (then a retry is a new message).",
    )
    channel: str = Field(
        description="The room, thread or inbox on the web service (`web:<channel>`); memory is "
        "compartmentalised by channel."
    )
    speaker: Speaker = Field(description="Who said it, as your system knows them.")
    text: str = Field(description="What was said: 1-32,000 characters, no NUL.")
    addressed: bool = Field(
        default=True, description="False when the agent merely overheard it (group chats)."
    )
    stream: bool = Field(
        default=False,
        description="Stream the reply's token deltas to the channel's SSE stream as it is "
        "written (the reply itself is always sent there).",
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
