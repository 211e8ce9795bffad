"""How each agent's inbox stands: what is waiting, for how long, and where the event in flight is.

What an on-call engineer needs to tell a busy agent from a stuck one: the agent's ``status``
query (queue, the event in its critical section with its step, attempt and last error, and since
when the oldest event has waited), and for an event already handed to its activation, what the
conversation and activation runs say they are doing (their current details in the Web UI; a
step that retries says which and why).
"""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime

from pydantic import BaseModel
from sqlalchemy.exc import OperationalError
from temporalio.api.sdk.v1 import WorkflowMetadata
from temporalio.client import Client, WorkflowHandle
from temporalio.service import RPCError

from contract import names
from schemas.agents import AgentStatus, CallHold, InFlightStatus


class InboxView(BaseModel):
    """One agent's inbox as ``persyn status`` shows it."""

    agent: str
    reachable: bool
    problem: str | None = None
    queued: int = 0
    oldest_waiting_seconds: float | None = None
    in_flight: InFlightStatus | None = None
    in_flight_seconds: float | None = None
    step_seconds: float | None = None
    run_details: list[str] = []
    """What the in-flight event's conversation and activation runs say they are doing."""
    call: CallHold | None = None
    """The live call holding the lock (or about to take it): other channels wait for it."""
    call_seconds: float | None = None
    """How long the call has held the lock."""
    calls_waiting: int = 0


def _age(since: datetime | None, now: datetime) -> float | None:
    return None if since is None else max(0.0, (now - since).total_seconds())


METADATA_QUERY = "__temporal_workflow_metadata"
"""The SDK's built-in query behind the Web UI's current details."""


async def current_details(handle: WorkflowHandle[object, object]) -> str | None:
    """What a run says it is doing now (``workflow.set_current_details``), if it answers."""
    try:
        meta = await handle.query(METADATA_QUERY, result_type=WorkflowMetadata)
    except Exception:  # a closed run, or no worker to answer: nothing to add
        return None
    return meta.current_details or None


async def _details(handle: WorkflowHandle[object, object]) -> str | None:
    details = await current_details(handle)
    return f"{handle.id}: {details}" if details else None


async def inbox_view(client: Client, agent: str, *, now: datetime | None = None) -> InboxView:
    """Query ``agent``'s inbox and, for an event in its activation, that run's current details."""
    now = now or datetime.now(UTC)
    handle = client.get_workflow_handle(names.agent_workflow_id(agent))
    try:
        status = await handle.query(names.STATUS, result_type=AgentStatus)
    except RPCError as err:
        return InboxView(agent=agent, reachable=False, problem=err.message.splitlines()[0])
    except OperationalError:
        # The answer is sealed with the agent's key, which PostgreSQL keeps.
        problem = "unreadable while PostgreSQL is down (answers are sealed with keys kept there)"
        return InboxView(agent=agent, reachable=False, problem=problem)
    except Exception as err:  # a query the run cannot answer (a worker down, an old run)
        return InboxView(agent=agent, reachable=False, problem=str(err).splitlines()[0][:200])
    flight = status.in_flight
    runs: list[str] = []
    if flight is not None:
        ids = []
        if flight.conversation_id:
            ids.append(names.conversation_workflow_id(flight.conversation_id))
        if flight.activation_id:
            ids.append(names.activation_workflow_id(flight.activation_id))
        found = await asyncio.gather(*(_details(client.get_workflow_handle(i)) for i in ids))
        runs = [d for d in found if d]
    return InboxView(
        agent=agent,
        reachable=True,
        queued=status.queued,
        oldest_waiting_seconds=_age(status.oldest_waiting_since, now),
        in_flight=flight,
        in_flight_seconds=_age(flight.received_at if flight else None, now),
        step_seconds=_age(flight.step_since if flight else None, now),
        run_details=runs,
        call=status.call,
        call_seconds=_age(status.call.since if status.call else None, now),
        calls_waiting=status.calls_waiting,
    )


async def inbox_views(client: Client, agents: list[str]) -> list[InboxView]:
    """:func:`inbox_view` for each of ``agents``, concurrently."""
    now = datetime.now(UTC)
    return list(await asyncio.gather(*(inbox_view(client, a, now=now) for a in agents)))
