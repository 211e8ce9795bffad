"""Image generation on the wire: its settings, a render's input, and its result.

``generate_image`` acknowledges at once and starts ``RenderWorkflow`` (``render/{ulid}``),
which renders through an OpenAI-compatible images endpoint, stores the picture under
``home/images/`` and delivers a reference to it to the conversation (``docs/tools.md``, Images).
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, SecretStr

from schemas.events import ChannelRef, Wire
from schemas.ids import AgentHandle, Ulid
from schemas.models import Attribution

IMAGE_PREFIX = "[image "
"""How a delivered render's message begins (the next turn's context source finds it so)."""


class ImageSettings(BaseModel):
    """The images endpoint (``PERSYN_IMAGES__*``, ``[images]`` in persyn.toml)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    base_url: str | None = Field(
        default=None,
        description="OpenAI-compatible endpoint (ends before /images/generations); unset: "
        "generate_image is absent.",
    )
    api_key: SecretStr | None = Field(default=None, description="Its bearer token, if any.")
    model: str = Field(default="gpt-image-1", description="Model sent, and priced per image.")
    size: str = Field(default="1024x1024", pattern=r"^\d{2,5}x\d{2,5}$")
    timeout_seconds: float = Field(default=180.0, gt=0, le=1800, description="One attempt.")
    max_sent_bytes: int = Field(
        default=20_000_000,
        ge=1024,
        le=50_000_000,
        description="The largest picture a person may send an agent (a channel keeps it "
        "under home/images/ for edit_image).",
    )


class RenderInput(Wire):
    """Start one render (``render/{render_id}``)."""

    render_id: Ulid
    agent: AgentHandle
    prompt: str = Field(min_length=1, max_length=4000)
    channel: ChannelRef = Field(description="Where the image is delivered.")
    activation_id: Ulid = Field(description="The activation whose tool call started it.")
    edit_of: list[Ulid] = Field(
        default_factory=list,
        max_length=4,
        description="Earlier renders to refine (one) or composite (several); empty: draw anew.",
    )
    attribution: Attribution = Field(
        default_factory=Attribution, description="The caller's, bound to the usage record."
    )


class RenderImageInput(Wire):
    """The render activity's input: what to draw, and under which ID to store it."""

    render_id: Ulid
    agent: AgentHandle
    prompt: str
    edit_of: list[Ulid] = Field(default_factory=list, max_length=4)


class RenderResult(Wire):
    """How a render ended: the stored image's reference, or why there is none."""

    render_id: Ulid
    status: Literal["done", "failed"]
    reference: str | None = Field(default=None, description="Where the image is kept.")
    error: str | None = None


class DeliverRenderInput(Wire):
    """Send a render's outcome to the conversation."""

    agent: AgentHandle
    channel: ChannelRef
    prompt: str
    result: RenderResult
