"""Step: may a reply be generated at all? On a paced channel, only while its budget lasts.

Two agents that always answer would talk forever; the channel's token budget stops them
(docs/channels.md, Pacing). It counts every model token the agent's runs on the channel cost,
so it is asked before the first of them: once it is spent, the activation ends silent with the
reason, before context is assembled or a model is called. The agent's own ``self:`` channels
are never paced and skip the question (and the patch marker: their histories stay as they were).
"""

from __future__ import annotations

from temporalio import workflow

from contract.policies import MESSAGE_PATH_DATABASE, summarized_local
from schemas.activation import ActivationInput
from schemas.autonomy import SELF_SERVICE
from schemas.delivery import Affordance, AffordReplyInput
from workflows.pipeline import shape

with workflow.unsafe.imports_passed_through():
    from activities.channels.pacing import PacingActivities

PATCH = "afford-reply-before-generating"
"""Runs recorded before it generated every reply and left the budget to the delivery."""


async def afford(data: ActivationInput) -> str | None:
    """Why no reply may be generated on ``data``'s channel, or ``None`` to go on."""
    if data.channel.service == SELF_SERVICE or not shape.patched(data, PATCH):
        return None
    affordance: Affordance = await workflow.execute_local_activity_method(
        PacingActivities.afford_reply,
        AffordReplyInput(agent=data.agent, channel=data.channel, activation_id=data.activation_id),
        **summarized_local(MESSAGE_PATH_DATABASE, "check the channel's token budget"),
    )
    return affordance.withheld
