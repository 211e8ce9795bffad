"""``persyn memory fold``: start an agent's folding pass now, instead of at its maintenance."""

from __future__ import annotations

from temporalio.client import WorkflowHandle
from temporalio.common import WorkflowIDConflictPolicy

from contract import names
from contract.policies import BACKGROUND
from schemas.folding import FoldingInput, FoldingResult
from schemas.settings import Settings
from store.queries.memory import agent_exists
from temporal.client import connect
from usecases.errors import UnknownAgentError
from usecases.store import open_store


async def fold_now(
    *, settings: Settings, agent: str, wait: bool
) -> tuple[str, FoldingResult | None]:
    """Start (or join, if one runs) ``agent``'s folding pass; its ID, and its result if waited.

    Raises:
        UnknownAgentError: no such agent.
    """
    async with open_store(settings, pool_size=1) as db, db.session() as session:
        if not await agent_exists(session, agent=agent):
            raise UnknownAgentError(agent)
    client = await connect(settings)
    handle: WorkflowHandle[object, FoldingResult] = await client.start_workflow(
        names.FOLDING_WORKFLOW,
        FoldingInput(agent=agent),
        id=names.folding_workflow_id(agent),
        task_queue=settings.task_queue,
        id_conflict_policy=WorkflowIDConflictPolicy.USE_EXISTING,
        priority=BACKGROUND,
        search_attributes=names.search_attributes(agent=agent),
        static_summary=f"{agent} folds memories into recollections (asked by the operator)",
        result_type=FoldingResult,
    )
    if not wait:
        return handle.id, None
    return handle.id, await handle.result()
