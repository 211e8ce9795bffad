"""The formation ledger: ranges of dialog on their way to becoming memory records.

A consolidation registers its range here, claims earlier ranges that failed, and keeps each
range's working state (draft summary, rating, classification) in the row, so every step is
idempotent and a retried step finds the work already done. "Earlier" always means earlier in
the dialog: turns are ordered by ``(at, id)``, which is the order the conversation saw them.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from sqlmodel.ext.asyncio.session import AsyncSession

from schemas.memory_formation import ClaimedFormation, TurnRange
from schemas.text import estimate_tokens
from store.queries.recall import FENCE_SQL, Fence
from store.sql import execute as _execute

MAX_ATTEMPTS = 5
"""A range that failed this many consolidations is left for the operator to look at."""

STALE_AFTER = timedelta(minutes=30)
"""A ``running`` range untouched this long belongs to a run that is gone; it may be reclaimed."""

MAX_TURNS = 2000
"""Most turns one range reads (a chunk is a few thousand tokens; this is a guard, not a goal)."""


@dataclass(frozen=True)
class RangeTurn:
    """A stored turn of a range."""

    id: str
    role: str
    speaker_name: str
    person_id: str | None
    text: str
    at: datetime
    imported: bool = False
    """The turn came from an imported file, not from a live conversation."""


async def range_turns(
    session: AsyncSession, *, conversation_id: str, after_turn: str | None, through_turn: str
) -> list[RangeTurn]:
    """The stored turns after ``after_turn`` up to ``through_turn``, in arrival order (``seq``)."""
    rows = await _execute(
        session,
        "SELECT d.id, d.role, d.speaker_name, d.person_id, d.text, d.at, "
        "EXISTS (SELECT 1 FROM conversations c WHERE c.id = d.conversation_id "
        "        AND c.source = 'import') AS imported FROM dialog_turns d "
        "WHERE d.conversation_id = :c "
        "AND d.seq <= (SELECT t.seq FROM dialog_turns t WHERE t.id = :through) "
        "AND (CAST(:after AS varchar) IS NULL "
        "     OR d.seq > (SELECT t.seq FROM dialog_turns t WHERE t.id = :after)) "
        "ORDER BY d.seq LIMIT :n",
        {"c": conversation_id, "after": after_turn, "through": through_turn, "n": MAX_TURNS},
    )
    return [
        RangeTurn(
            id=str(r.id),
            role=str(r.role),
            speaker_name=str(r.speaker_name),
            person_id=r.person_id,
            text=str(r.text),
            at=r.at,
            imported=bool(r.imported),
        )
        for r in rows
    ]


async def claim(
    session: AsyncSession,
    *,
    consolidation_id: str,
    agent: str,
    channel_key: str | None,
    turn_range: TurnRange | None,
    pickup_limit: int,
    now: datetime,
) -> list[ClaimedFormation]:
    """Register ``turn_range`` as this run's own and claim up to ``pickup_limit`` failed ones.

    Safe to repeat: the own range is keyed by the run's ID and by its last turn, and a repeat
    returns every range already claimed by this run.

    Returns:
        The run's ranges, oldest first.
    """
    if turn_range is not None and channel_key is not None:
        await _register(session, consolidation_id, agent, channel_key, turn_range, now)
    if pickup_limit:
        await _execute(
            session,
            "UPDATE memory_formations SET status = 'running', claimed_by = :me, "
            "attempts = attempts + 1, updated_at = :now WHERE id IN ("
            "  SELECT id FROM memory_formations WHERE agent = :agent AND id <> :me AND ("
            "    (status = 'failed' AND attempts < :max)"
            "    OR (status = 'running' AND updated_at < :stale))"
            "  ORDER BY turn_first_at NULLS LAST, id LIMIT :n FOR UPDATE SKIP LOCKED)",
            {
                "me": consolidation_id,
                "agent": agent,
                "now": now,
                "max": MAX_ATTEMPTS,
                "stale": now - STALE_AFTER,
                "n": pickup_limit,
            },
        )
    rows = await _execute(
        session,
        "SELECT id, conversation_id FROM memory_formations "
        "WHERE claimed_by = :me AND status = 'running' ORDER BY turn_first_at NULLS LAST, id",
        {"me": consolidation_id},
    )
    claimed = [
        ClaimedFormation(
            formation_id=str(r.id),
            conversation_id=str(r.conversation_id),
            picked_up=str(r.id) != consolidation_id,
        )
        for r in rows
    ]
    await session.commit()
    return claimed


async def _register(
    session: AsyncSession,
    consolidation_id: str,
    agent: str,
    channel_key: str,
    turn_range: TurnRange,
    now: datetime,
) -> None:
    channel = await _execute(
        session,
        "SELECT id FROM channels WHERE agent = :a AND key = :k",
        {"a": agent, "k": channel_key},
    )
    channel_id = channel.scalar_one_or_none()
    if channel_id is None:
        return  # nothing was ever said there, so there is nothing to remember
    turns = await range_turns(
        session,
        conversation_id=turn_range.conversation_id,
        after_turn=turn_range.after_turn,
        through_turn=turn_range.through_turn,
    )
    participants = sorted({t.person_id for t in turns if t.person_id})
    await _execute(
        session,
        "INSERT INTO memory_formations (id, agent, conversation_id, channel_id, after_turn, "
        "through_turn, turn_first, turn_last, turn_first_at, turn_last_at, turns, status, "
        "claimed_by, participants, created_at, updated_at) VALUES (:id, :agent, :c, :ch, "
        ":after, :through, :first, :last, :first_at, :last_at, :turns, 'running', :id, "
        "CAST(:people AS varchar[]), :now, :now) ON CONFLICT DO NOTHING",
        {
            "id": consolidation_id,
            "agent": agent,
            "c": turn_range.conversation_id,
            "ch": str(channel_id),
            "after": turn_range.after_turn,
            "through": turn_range.through_turn,
            "first": turns[0].id if turns else None,
            "last": turns[-1].id if turns else None,
            "first_at": turns[0].at if turns else None,
            "last_at": turns[-1].at if turns else None,
            "turns": len(turns),
            "people": participants,
            "now": now,
        },
    )


async def load(session: AsyncSession, *, formation_id: str) -> Any | None:
    """The formation row (every column), or ``None``."""
    result = await _execute(
        session, "SELECT * FROM memory_formations WHERE id = :id", {"id": formation_id}
    )
    return result.first()


async def update(session: AsyncSession, *, formation_id: str, now: datetime, **values: Any) -> None:
    """Set columns of a formation (JSON for dicts, arrays for lists) and commit."""
    sets, params = ["updated_at = :now"], {"id": formation_id, "now": now}
    for column, value in values.items():
        if isinstance(value, dict):
            sets.append(f"{column} = CAST(:{column} AS jsonb)")
            value = json.dumps(value)
        elif isinstance(value, list):
            sets.append(f"{column} = CAST(:{column} AS varchar[])")
        else:
            sets.append(f"{column} = :{column}")
        params[column] = value
    await _execute(
        session, f"UPDATE memory_formations SET {', '.join(sets)} WHERE id = :id", params
    )
    await session.commit()


async def running_predecessors(session: AsyncSession, *, formation_id: str, now: datetime) -> int:
    """Earlier ranges of the same agent and memory compartment still being formed elsewhere.

    A memory forms as of its moment, beside the memories of everything before it; waiting for
    those still in flight keeps a chunk from forming without its predecessor's memory.
    """
    result = await _execute(
        session,
        "SELECT count(*) FROM memory_formations p JOIN memory_formations f ON f.id = :id "
        "JOIN channels fc ON fc.id = f.channel_id JOIN channels pc ON pc.id = p.channel_id "
        "WHERE p.agent = f.agent AND p.id <> f.id AND p.status = 'running' "
        "AND p.updated_at >= :fresh AND p.turn_first_at < f.turn_first_at "
        "AND (pc.id = fc.id OR (fc.memory_group IS NOT NULL AND pc.memory_group = fc.memory_group))"
        " AND (p.claimed_by IS DISTINCT FROM f.claimed_by)",
        {"id": formation_id, "fresh": now - STALE_AFTER},
    )
    return int(result.scalar_one())


async def failed_count(session: AsyncSession, *, agent: str) -> int:
    """Ranges of the agent waiting for another try."""
    result = await _execute(
        session,
        "SELECT count(*) FROM memory_formations "
        "WHERE agent = :a AND status = 'failed' AND attempts < :max",
        {"a": agent, "max": MAX_ATTEMPTS},
    )
    return int(result.scalar_one())


async def compartment(session: AsyncSession, *, channel_id: str) -> list[str]:
    """The channel and the channels sharing its memory group."""
    rows = await _execute(
        session,
        "SELECT c.id FROM channels cur JOIN channels c ON c.agent = cur.agent "
        "AND (c.id = cur.id OR (cur.memory_group IS NOT NULL "
        "AND c.memory_group = cur.memory_group)) WHERE cur.id = :id ORDER BY c.id",
        {"id": channel_id},
    )
    return [str(r.id) for r in rows]


@dataclass(frozen=True)
class EarlierMemory:
    """A memory shown beside a chunk being remembered."""

    id: str
    summary: str
    moment: datetime


async def earlier_memories(
    session: AsyncSession,
    *,
    agent: str,
    channel_ids: Sequence[str],
    present: Sequence[str],
    before: datetime,
    budget_tokens: int,
    limit: int = 100,
) -> list[EarlierMemory]:
    """The newest memories formed from turns said before ``before``, oldest first.

    Only what the chunk's moment could have known: records of this agent and memory
    compartment, not forgotten, that the people present may see (recall's fences), whose last
    turn came strictly before the chunk's first. Newest first until ``budget_tokens`` is spent.
    """
    if budget_tokens <= 0 or not channel_ids:
        return []
    fence = Fence(agent=agent, channel_ids=channel_ids, present=present)
    rows = await _execute(
        session,
        "SELECT m.id, m.summary, coalesce(m.turn_last_at, m.created_at) AS moment "
        f"FROM memory_records m WHERE {FENCE_SQL} "
        "AND coalesce(m.turn_last_at, m.created_at) < :before "
        "ORDER BY moment DESC, m.id DESC LIMIT :n",
        {**fence.params(), "before": before, "n": limit},
    )
    chosen: list[EarlierMemory] = []
    spent = 0
    for r in rows:
        cost = estimate_tokens(str(r.summary))
        if spent + cost > budget_tokens:
            break
        spent += cost
        chosen.append(EarlierMemory(id=str(r.id), summary=str(r.summary), moment=r.moment))
    return chosen[::-1]


@dataclass(frozen=True)
class AgentVoice:
    """Who is remembering, in which time zone, and on which channel."""

    name: str
    persona: str
    timezone: str
    channel: str


async def agent_voice(session: AsyncSession, *, agent: str, channel_id: str) -> AgentVoice:
    """The agent's name, seed persona and clock, and the channel's key."""
    row = (
        await _execute(
            session,
            "SELECT a.name, a.persona, coalesce(a.config ->> 'timezone', 'UTC') AS tz, "
            "(SELECT c.key FROM channels c WHERE c.id = :ch) AS channel "
            "FROM agents a WHERE a.handle = :a",
            {"a": agent, "ch": channel_id},
        )
    ).one()
    return AgentVoice(
        name=str(row.name),
        persona=str(row.persona),
        timezone=str(row.tz),
        channel=str(row.channel or "an unknown channel"),
    )


def as_text_list(values: Sequence[str] | None) -> list[str]:
    """A varchar[] column's value as a list (``None`` becomes empty)."""
    return [str(v) for v in values or []]
