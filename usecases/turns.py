"""How one turn is going, for a client showing it live: its tool calls and woven second thoughts.

A tool call is stored when the model asks for it and finished when its result is in, so a call
without a finish time is still running (a sandbox task, an image render). A parked conclusion
names the activation that spoke with it woven into its prompt once that turn is transmitted.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from sqlmodel import col, func, select

from schemas.tools import ToolCallRecord
from store.db import Database
from store.queries.runtime import activations_of_event
from store.queries.tool_calls import calls_of
from store.tables.deliberation import ParkedConclusionRow


@dataclass(frozen=True)
class TurnProgress:
    """What a client shows beside a reply: its activations, tool calls, and woven conclusions."""

    activation_ids: list[str] = field(default_factory=list)
    calls: list[ToolCallRecord] = field(default_factory=list)
    woven: int = 0
    """Parked conclusions of earlier deliberations this turn wove into its reply."""


async def turn_progress(*, db: Database, event_id: str) -> TurnProgress:
    """The activations that handled ``event_id`` so far, their tool calls and woven conclusions."""
    async with db.autocommit() as session:
        activations = await activations_of_event(session, event_id=event_id)
        if not activations:
            return TurnProgress()
        calls = await calls_of(session, activation_ids=activations)
        woven = await session.exec(
            select(func.count()).where(col(ParkedConclusionRow.consumed_by).in_(activations))
        )
        return TurnProgress(activation_ids=activations, calls=calls, woven=int(woven.one()))
