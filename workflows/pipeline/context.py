"""Step: assemble the prompt (every context source, concurrently, under the budget)."""

from __future__ import annotations

from temporalio import workflow

from contract.policies import MESSAGE_PATH_DATABASE, summarized_local
from schemas.activation import ActivationInput, AssembleContextInput, PromptRef
from schemas.models import TaskType

with workflow.unsafe.imports_passed_through():
    from activities.context.activities import ContextActivities


async def assemble(data: ActivationInput, *, task: TaskType = TaskType.RESPOND) -> PromptRef:
    """Store the prompt for ``task`` and return its reference."""
    return await workflow.execute_local_activity_method(
        ContextActivities.assemble,
        AssembleContextInput(
            activation_id=data.activation_id,
            agent=data.agent,
            conversation_id=data.conversation_id,
            channel=data.channel,
            event=data.event,
            person_id=data.person_id,
            participants=data.participants,
            window_turn_ids=data.window_turn_ids,
            now=workflow.now(),
            task=task,
        ),
        **summarized_local(MESSAGE_PATH_DATABASE, "assemble context"),
    )
