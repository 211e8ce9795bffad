"""How one turn is going, for a client showing it live: its tool calls and woven second thoughts.

A tool call is stored when the model asks for it and finished when its result is in, so a call
without a finish time is still running (a sandbox task, an image render). A parked conclusion
names the activation that spoke with it woven into its prompt once that turn is transmitted.
The store records an activation when it ends; while it runs, the agent's status names it.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field

from sqlmodel import col, func, select
from temporalio.client import Client

from contract import names
from schemas.tools import ToolCallRecord
from store.db import Database
from store.queries.runtime import activations_of_event
from store.queries.tool_calls import calls_of
from store.tables.deliberation import ParkedConclusionRow
from usecases.inboxes import inbox_view


@dataclass(frozen=True)
class TurnProgress:
    """What a client shows beside a reply: its activations, tool calls, and woven conclusions."""

    activation_ids: list[str] = field(default_factory=list)
    calls: list[ToolCallRecord] = field(default_factory=list)
    woven: int = 0
    """Parked conclusions of earlier deliberations this turn wove into its reply."""


async def activation_ended(*, client: Client, activation_id: str, timeout: float) -> bool:
    """Wait for the activation to end; whether it did within ``timeout`` seconds.

    Its receipt comes earlier: the decision is recorded and woven conclusions consumed after it.
    """
    handle = client.get_workflow_handle(names.activation_workflow_id(activation_id))
    try:
        await asyncio.wait_for(handle.result(), timeout)
    except Exception:  # still running, failed or gone: the caller reads what is recorded
        return False
    return True


async def in_flight_activation(*, client: Client, handle: str, event_id: str) -> str | None:
    """The activation handling ``event_id`` now, if it is the event in ``handle``'s hands."""
    flight = (await inbox_view(client, handle)).in_flight
    return flight.activation_id if flight is not None and flight.event_id == event_id else None


async def turn_progress(
    *,
    db: Database,
    client: Client,
    handle: str,
    event_id: str,
    known: list[str] | None = None,
) -> TurnProgress:
    """The activations handling ``event_id``, their tool calls so far and woven conclusions.

    ``known`` are its activations found before (a running one's ID does not change): given,
    neither the store nor the agent is asked again, so a client polling a turn costs the
    agent's worker no query.
    """
    activations = list(known or [])
    if not activations:
        async with db.autocommit() as session:
            activations = await activations_of_event(session, event_id=event_id)
    if not activations:
        running = await in_flight_activation(client=client, handle=handle, event_id=event_id)
        activations = [running] if running else []
    if not activations:
        return TurnProgress()
    async with db.autocommit() as session:
        calls = await calls_of(session, activation_ids=activations)
        woven = await session.exec(
            select(func.count()).where(col(ParkedConclusionRow.consumed_by).in_(activations))
        )
        return TurnProgress(activation_ids=activations, calls=calls, woven=int(woven.one()))
