"""Starting memory formation from outside a conversation (``persyn import --consolidate``)."""

from __future__ import annotations

from temporalio.client import Client

from contract import names
from schemas.ids import new_ulid
from schemas.memory_formation import ConsolidationInput, FormationReason, TurnRange
from store.db import Database
from store.queries.imports import unconsolidated_range


async def consolidate_conversation(
    client: Client, db: Database, *, agent: str, conversation_id: str, task_queue: str
) -> str | None:
    """Start a ``ConsolidationWorkflow`` over what of a conversation is not yet remembered.

    Returns:
        The workflow ID, or ``None`` when every turn is already consolidated or claimed.
    """
    async with db.session() as session:
        pending = await unconsolidated_range(session, conversation_id=conversation_id)
    if pending is None:
        return None
    consolidation_id = new_ulid()
    workflow_id = names.consolidation_workflow_id(consolidation_id)
    await client.start_workflow(
        names.CONSOLIDATION_WORKFLOW,
        ConsolidationInput(
            consolidation_id=consolidation_id,
            agent=agent,
            reason=FormationReason.IMPORT,
            channel=pending.channel,
            range=TurnRange(
                conversation_id=conversation_id,
                after_turn=pending.after_turn,
                through_turn=pending.through_turn,
            ),
        ),
        id=workflow_id,
        task_queue=task_queue,
        search_attributes=names.search_attributes(
            agent=agent, channel=pending.channel.key, conversation=conversation_id
        ),
        static_summary=f"{agent} remembers an imported conversation on {pending.channel.key}",
    )
    return workflow_id
