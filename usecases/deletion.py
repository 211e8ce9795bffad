"""Deleting an agent: its runs end, its keys are shredded, every row of it is erased.

In this order, so that nothing writes for the agent while it is erased and a failure part
way leaves an agent that a second run finishes deleting:

1. its schedules go (``heartbeat/``, ``maintenance/``, each ``reminder/``), then every
   running workflow tagged with it (``agent/{handle}`` first, then its conversations,
   activations, deliveries and background runs);
2. it is shredded (``usecases.shred``): its payload keys, sandbox environment and skill
   library, so what Temporal's histories still hold of it can no longer be read;
3. its rows are erased in one transaction (``store.queries.agent_deletion``), keeping only
   its usage totals and the audit entry of the deletion (who, when);
4. a last sweep ends any run a schedule started while this was under way.
"""

from __future__ import annotations

from dataclasses import dataclass

from temporalio.client import Client
from temporalio.service import RPCError, RPCStatusCode

from contract import names
from schemas.ids import check_handle
from schemas.settings import Settings
from store.queries.agent_deletion import AgentErasure, erase_agent
from store.sql import execute
from temporal.client import connect
from temporal.schedules_autonomy import remove
from usecases.agents import find_agent
from usecases.errors import UnknownAgentError
from usecases.shred import ShredReport, shred_agent
from usecases.store import open_store

TERMINATE_REASON = "the agent was deleted"
ACTIVATION_PREFIX = names.activation_workflow_id("")
"""``activation/``: the ended runs whose stored prompts are the agent's."""


@dataclass(frozen=True)
class DeletionReport:
    """What deleting an agent did."""

    schedules: int
    """Schedules deleted."""
    workflows: int
    """Running workflows terminated."""
    shred: ShredReport
    erased: AgentErasure


async def delete_agent(*, settings: Settings, handle: str, actor: str) -> DeletionReport:
    """Delete the agent ``handle`` for good; ``actor`` (who) is kept in the audit.

    Idempotent while the agent's row exists: run it again after a failure to finish.

    Raises:
        UnknownAgentError: no such agent (or it was deleted already).
    """
    check_handle(handle)
    if await find_agent(settings=settings, handle=handle) is None:
        raise UnknownAgentError(handle)
    client = await connect(settings)
    async with open_store(settings) as db, db.session() as session:
        reminders = await execute(
            session, "SELECT id FROM reminders WHERE agent = :a", {"a": handle}
        )
        reminder_ids = [str(r.id) for r in reminders]
    schedules = await _remove_schedules(client, handle=handle, reminders=reminder_ids)
    ended = await end_runs(client, handle=handle)
    shred = await shred_agent(settings=settings, handle=handle)
    runs = [w.removeprefix(ACTIVATION_PREFIX) for w in ended if w.startswith(ACTIVATION_PREFIX)]
    async with open_store(settings) as db, db.session() as session:
        erased = await erase_agent(
            session, agent=handle, actor=actor, keys=shred.keys, activations=runs
        )
    ended += await end_runs(client, handle=handle)
    return DeletionReport(schedules=schedules, workflows=len(ended), shred=shred, erased=erased)


async def _remove_schedules(client: Client, *, handle: str, reminders: list[str]) -> int:
    ids = [names.heartbeat_schedule_id(handle), names.maintenance_schedule_id(handle)]
    ids += [names.reminder_schedule_id(r) for r in reminders]
    removed = 0
    for schedule_id in ids:
        removed += int(await remove(client, schedule_id))
    return removed


async def end_runs(client: Client, *, handle: str) -> list[str]:
    """Terminate every running workflow of the agent; returns the IDs of those that ran.

    The inbox goes first, so it starts no conversation while the others end; the rest are
    found by their ``PersynAgent`` search attribute.
    """
    inbox = names.agent_workflow_id(handle)
    ended = [inbox] if await _terminate(client, inbox) else []
    query = f"{names.AGENT.name} = '{handle}' AND ExecutionStatus = 'Running'"
    async for run in client.list_workflows(query):
        if await _terminate(client, run.id):
            ended.append(run.id)
    return ended


async def _terminate(client: Client, workflow_id: str) -> bool:
    try:
        await client.get_workflow_handle(workflow_id).terminate(reason=TERMINATE_REASON)
    except RPCError as err:
        if err.status is RPCStatusCode.NOT_FOUND:  # not running (or never was)
            return False
        raise
    return True
