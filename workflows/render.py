"""``RenderWorkflow``: one image render (``render/{ulid}``), spec §4.6.

Lifecycle: started by the ``generate_image`` tool as an independent workflow (the agent's turn
only waits for the start), it binds the calling activation's attribution, renders through the
images endpoint (``images.render``, a server error retried by policy), and delivers the image's
reference, or why there is none, to the conversation (``images.deliver``), where the agent's
next turn reads it. Two activities: it never continues as new.
"""

from __future__ import annotations

from temporalio import workflow
from temporalio.exceptions import ActivityError

from contract import attribution, names
from contract.policies import DATABASE_ACTIVITY, IMAGE_RENDER, summarized
from schemas.images import DeliverRenderInput, RenderImageInput, RenderInput, RenderResult

with workflow.unsafe.imports_passed_through():
    from activities.images.render import ImageActivities


@workflow.defn(name=names.RENDER_WORKFLOW)
class RenderWorkflow:
    """Render one picture and deliver it to the conversation that asked for it."""

    @workflow.run
    async def run(self, data: RenderInput) -> RenderResult:
        """Render, then deliver; a failed render is delivered as its reason."""
        attribution.bind(**data.attribution.model_dump())
        try:
            result = await workflow.execute_activity_method(
                ImageActivities.render,
                RenderImageInput(
                    render_id=data.render_id,
                    agent=data.agent,
                    prompt=data.prompt,
                    edit_of=data.edit_of,
                ),
                **summarized(IMAGE_RENDER, "render the image"),
            )
        except ActivityError as err:
            cause = err.cause or err
            result = RenderResult(render_id=data.render_id, status="failed", error=str(cause))
        try:
            await workflow.execute_activity_method(
                ImageActivities.deliver,
                DeliverRenderInput(
                    agent=data.agent, channel=data.channel, prompt=data.prompt, result=result
                ),
                **summarized(DATABASE_ACTIVITY, "deliver the image"),
            )
        except ActivityError as err:
            workflow.logger.warning("render not delivered: %s", err.cause or err)
        return result
