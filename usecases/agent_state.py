"""An agent's live state at a glance, for an operator's side panel.

What the agent is doing now (the in-flight runs' current details, as the Web UI shows them),
its open goals, its pending reminders, its heartbeat, and what a conversation has cost so far
from the usage ledger. The caller brings an open store and a Temporal client, so a panel
refreshed every few seconds opens no connection of its own.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

from temporalio.client import Client
from temporalio.service import RPCError

from activities.scheduling.heartbeats import Heartbeats
from activities.scheduling.reminders import Reminders
from schemas.autonomy import GoalPublic, HeartbeatStatus, ReminderPublic
from schemas.settings import Settings
from schemas.usage import UsageQuery
from store.db import Database
from store.queries.goals import list_goals
from store.queries.usage_report import usage_report
from usecases.errors import TemporalUnreachableError
from usecases.inboxes import inbox_view

EPOCH = datetime(2000, 1, 1, tzinfo=UTC)
"""Before any record: a conversation's cost is summed over all of its records."""
HEALTH_WAIT_S = 3.0
"""How long Temporal's health check may take before Temporal counts as away."""


@dataclass(frozen=True)
class AgentState:
    """The side panel's contents; ``problem`` says why the agent's inbox did not answer."""

    current: list[str] = field(default_factory=list)
    goals: list[GoalPublic] = field(default_factory=list)
    reminders: list[ReminderPublic] = field(default_factory=list)
    heartbeat: HeartbeatStatus | None = None
    cost_usd: float = 0.0
    tokens: int = 0
    problem: str | None = None


async def conversation_cost(*, db: Database, conversation_id: str) -> tuple[float, int]:
    """What ``conversation_id`` has cost so far: dollars and tokens, from the ledger."""
    query = UsageQuery(since=EPOCH, until=datetime.now(UTC), conversation=conversation_id)
    async with db.autocommit() as session:
        total = (await usage_report(session, query=query)).total
    return total.cost_usd, total.input_tokens + total.output_tokens


async def agent_state(
    *,
    settings: Settings,
    db: Database,
    client: Client,
    handle: str,
    conversation_id: str | None,
) -> AgentState:
    """Read ``handle``'s live state; ``conversation_id`` (if any) is the one to cost.

    Raises:
        TemporalUnreachableError: Temporal does not answer (the inbox alone would only say
            it is unreadable).
    """
    try:
        await client.service_client.check_health(timeout=timedelta(seconds=HEALTH_WAIT_S))
    except RPCError as err:
        raise TemporalUnreachableError(f"Temporal does not answer ({err.message})") from None
    view = await inbox_view(client, handle)
    async with db.autocommit() as session:
        goals = await list_goals(session, agent=handle)
    reminders = await Reminders(db, client, settings.autonomy).list(agent=handle)
    heartbeat = await Heartbeats(db, client, settings.autonomy).status(agent=handle)
    cost, tokens = (0.0, 0)
    if conversation_id is not None:
        cost, tokens = await conversation_cost(db=db, conversation_id=conversation_id)
    return AgentState(
        current=[detail.split(": ", 1)[-1] for detail in view.run_details],
        goals=goals,
        reminders=reminders,
        heartbeat=heartbeat,
        cost_usd=cost,
        tokens=tokens,
        problem=None if _never_ran(view.problem) else view.problem,
    )


def _never_ran(problem: str | None) -> bool:
    """An agent that has never been spoken to has no inbox run yet: nothing is wrong."""
    return problem is not None and "not found" in problem
