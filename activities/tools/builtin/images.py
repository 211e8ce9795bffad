"""``generate_image``: render a described scene without blocking the turn (spec §4.6).

The tool starts ``RenderWorkflow`` (``render/{call ulid}``) and acknowledges at once; the
render runs concurrently, and the image's reference reaches the conversation (and so the
agent's next turn) when it is done. Absent unless an images endpoint is configured.
"""

from __future__ import annotations

import contextlib

from pydantic import BaseModel, Field
from temporalio import activity
from temporalio.client import Client
from temporalio.exceptions import WorkflowAlreadyStartedError

from activities.tools.builtin.deps import ToolDeps
from activities.tools.registry import Tool, ToolError, ToolInput, ToolRun
from contract import attribution, names
from schemas.images import RenderInput
from schemas.settings import Settings
from schemas.web import ToolAvailability

TOOL_NAME = "generate_image"


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
        """Start the render (once per stored call: a retried call finds it started)."""
        if not call.call_id:
            raise ToolError("generate_image needs a stored tool call")
        context = call.context
        render = RenderInput(
            render_id=call.call_id,
            agent=context.agent,
            prompt=args.prompt,
            channel=context.channel,
            activation_id=context.activation_id,
            attribution=attribution.current(),
        )
        queue = activity.info().task_queue if activity.in_activity() else names.TASK_QUEUE
        with contextlib.suppress(WorkflowAlreadyStartedError):
            await self._client.start_workflow(
                names.RENDER_WORKFLOW,
                render,
                id=names.render_workflow_id(render.render_id),
                task_queue=queue,
                search_attributes=names.search_attributes(
                    agent=context.agent,
                    channel=context.channel.key,
                    conversation=context.conversation_id,
                    trigger="render",
                ),
                static_summary=f"image for {context.agent}: {args.prompt[:80]}",
                static_details=args.prompt,
            )
        return RenderStarted(render_id=render.render_id)


def image_availability(settings: Settings) -> ToolAvailability:
    """Whether ``generate_image`` is offered, and why not."""
    configured = settings.images.base_url is not None
    return ToolAvailability(
        name=TOOL_NAME,
        source="built-in",
        available=configured,
        reason="" if configured else "no images endpoint (PERSYN_IMAGES__BASE_URL)",
    )


def image_tools(deps: ToolDeps) -> list[Tool]:
    """``generate_image`` when an endpoint is configured and a Temporal client is there."""
    if deps.client is None or not image_availability(deps.settings).available:
        return []
    return [GenerateImage(deps.client)]
