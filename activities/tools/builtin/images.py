"""``generate_image``: render a described scene without blocking the turn (spec §4.6).

The tool starts ``RenderWorkflow`` (``render/{call ulid}``) and acknowledges at once; the
render runs concurrently, and the image's reference reaches the conversation (and so the
agent's next turn) when it is done. Absent unless an images endpoint is configured.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from pydantic import BaseModel, Field
from temporalio.client import Client

from activities.images.files import latest_image
from activities.tools.background import start_once
from activities.tools.builtin.deps import ToolDeps
from activities.tools.registry import Tool, ToolError, ToolInput, ToolRun
from contract import attribution, names
from schemas.ids import Ulid
from schemas.images import RenderInput
from schemas.settings import Settings
from schemas.web import ToolAvailability

TOOL_NAME = "generate_image"
EDIT_TOOL_NAME = "edit_image"


class GenerateImageInput(ToolInput):
    """Input of ``generate_image``."""

    prompt: str = Field(
        min_length=1,
        max_length=4000,
        description="The scene to render, described concretely (subject, setting, style).",
    )


class RenderStarted(BaseModel):
    """The acknowledgement: the render runs on; the image comes later."""

    render_id: str
    status: str = "started"
    note: str = (
        "The image is being rendered; it will arrive in this conversation on its own. "
        "Tell the person it is coming; do not wait for it."
    )


class EditImageInput(ToolInput):
    """Input of ``edit_image``."""

    prompt: str = Field(
        min_length=1, max_length=4000, description="What to change, or how to combine them."
    )
    render_ids: list[Ulid] = Field(
        default_factory=list,
        max_length=4,
        description="Images to refine (one) or composite (several), by the IDs their "
        "messages carry: your renders, or pictures a person sent ('[picture sent: image "
        "ID]'); empty: the most recent one.",
    )


async def start_render(
    client: Client, call: ToolRun, prompt: str, edit_of: list[str] | None = None
) -> RenderStarted:
    """Start ``render/{call id}`` (once per stored call: a retried call finds it started)."""
    if not call.call_id:
        raise ToolError("an image tool needs a stored tool call")
    context = call.context
    render = RenderInput(
        render_id=call.call_id,
        agent=context.agent,
        prompt=prompt,
        channel=context.channel,
        activation_id=context.activation_id,
        edit_of=edit_of or [],
        attribution=attribution.current(),
    )
    kind = "image edit" if render.edit_of else "image"
    await start_once(
        client,
        names.RENDER_WORKFLOW,
        render,
        workflow_id=names.render_workflow_id(render.render_id),
        context=context,
        trigger="render",
        summary=f"{kind} for {context.agent}: {prompt[:80]}",
        details=prompt,
    )
    return RenderStarted(render_id=render.render_id)


class GenerateImage(Tool):
    """Start a render and return at once."""

    name = TOOL_NAME
    description = (
        "Render a picture from a described scene. Returns at once; the finished image (a "
        "stored file reference) arrives in this conversation when it is ready."
    )
    input_model = GenerateImageInput
    output_model = RenderStarted

    def __init__(self, client: Client) -> None:
        self._client = client

    async def run(self, call: ToolRun, args: GenerateImageInput) -> RenderStarted:
        """Start the render."""
        return await start_render(self._client, call, args.prompt)


class EditImage(Tool):
    """Refine the most recent render, or composite several, and return at once."""

    name = EDIT_TOOL_NAME
    description = (
        "Refine the most recent image (or the ones you name: your renders, or pictures a "
        "person sent) from a description of the change, or composite several into one. "
        "Returns at once; the result arrives in this conversation when it is ready."
    )
    input_model = EditImageInput
    output_model = RenderStarted

    def __init__(self, client: Client, root: Path) -> None:
        self._client = client
        self._root = root

    async def run(self, call: ToolRun, args: EditImageInput) -> RenderStarted:
        """Resolve "the most recent" now, so the render input names its sources."""
        sources = list(args.render_ids)
        if not sources:
            latest = await asyncio.to_thread(latest_image, self._root / call.context.agent)
            if latest is None:
                raise ToolError("there is no image to edit yet: make one with generate_image")
            sources = [latest]
        return await start_render(self._client, call, args.prompt, sources)


def image_availability(settings: Settings) -> list[ToolAvailability]:
    """Whether the image tools are offered, and why not."""
    configured = settings.images.base_url is not None
    reason = "" if configured else "no images endpoint (PERSYN_IMAGES__BASE_URL)"
    return [
        ToolAvailability(name=name, source="built-in", available=configured, reason=reason)
        for name in (EDIT_TOOL_NAME, TOOL_NAME)
    ]


def image_tools(deps: ToolDeps) -> list[Tool]:
    """The image tools, when an endpoint is configured and a Temporal client is there."""
    if deps.client is None or deps.settings.images.base_url is None:
        return []
    return [GenerateImage(deps.client), EditImage(deps.client, deps.settings.home / "images")]
