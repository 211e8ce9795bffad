"""Step: take stock of how the agent feels after the exchange (spec §4.9).

Runs last, after the reply is out and the agent's lock released, so it never delays a reply.
The classifier's reading is stored as the next point of the agent's trajectory; a failure of
any kind records nothing and the activation ends as it would have. Histories recorded before
the emotional state existed replay unchanged: the step is gated by the ``emotion`` patch.
"""

from __future__ import annotations

from temporalio import workflow
from temporalio.exceptions import ActivityError

from contract.policies import CRITIC_CALL, summarized
from schemas.activation import ActivationInput
from schemas.dialog import DialogTurn
from schemas.emotion import ClassifyEmotionInput
from workflows.pipeline import shape
from workflows.pipeline.decide import EMOTION_PATCH

with workflow.unsafe.imports_passed_through():
    from activities.emotion.activities import EmotionActivities


async def take_stock(data: ActivationInput, reply: DialogTurn | None) -> None:
    """Classify and record the agent's emotional state at the end of this exchange."""
    if not shape.patched(data, EMOTION_PATCH):
        return
    try:
        await workflow.execute_activity_method(
            EmotionActivities.classify,
            ClassifyEmotionInput(
                agent=data.agent,
                conversation_id=data.conversation_id,
                channel_key=data.channel.key,
                activation_id=data.activation_id,
                window_turn_ids=data.window_turn_ids,
                reply_turn_id=reply.turn_id if reply is not None else None,
                at=workflow.now(),
                agent_name=data.agent_name,
            ),
            # Fewer attempts than a reply's call: a turn without a reading is a fine outcome.
            **summarized(CRITIC_CALL, "take stock of how I feel"),
        )
    except ActivityError as err:
        workflow.logger.warning("no emotion reading this turn: %s", err.cause or err)
