"""Guardrail queries: the history rules read, firings recorded once, cooldowns set and read."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import LiteralString

from sqlalchemy import func, update
from sqlalchemy.dialects.postgresql import insert
from sqlmodel import col, select
from sqlmodel.ext.asyncio.session import AsyncSession

from store.lane import Lane
from store.tables.guardrails import GuardrailCooldownRow, GuardrailFiringRow


@dataclass(slots=True)
class TurnFacts:
    """What a rule reads of a stored turn: never its vectors or its text-search columns."""

    id: str
    role: str
    text: str
    at: datetime
    person_id: str | None
    conversation_id: str


# The history reads run on the driver lane: every exchange's evaluation and every blocking
# rule's screen read them, and through the session the statement building cost more than the
# reads. Only the columns of TurnFacts: a whole row would parse each turn's embedding too.
_FACTS = "SELECT d.id, d.role, d.text, d.at, d.person_id, d.conversation_id FROM dialog_turns d "
_LATEST_FIRST = " ORDER BY d.seq DESC LIMIT %(limit)s"


async def _facts(lane: Lane, sql: LiteralString, params: Mapping[str, object]) -> list[TurnFacts]:
    return [TurnFacts(**row) for row in await lane.rows(sql, params)]


_PERSON_TURNS = _FACTS + "WHERE d.conversation_id = %(conversation_id)s AND d.role = 'person'"
_THROUGH = " AND d.seq <= coalesce((SELECT t.seq FROM dialog_turns t WHERE t.id = %(mark)s), d.seq)"
_AGENT_REPLIES = _FACTS + "WHERE d.conversation_id = %(conversation_id)s AND d.role = 'agent'"
_BEFORE = (
    " AND d.seq < coalesce((SELECT t.seq FROM dialog_turns t WHERE t.id = %(mark)s), d.seq + 1)"
)


async def person_turns_in_conversation(
    lane: Lane, *, conversation_id: str, limit: int, through: str | None = None
) -> Sequence[TurnFacts]:
    """The latest ``limit`` turns people said in one conversation, oldest first.

    ``through`` ends the stretch at that turn, so an exchange evaluated late is not judged
    by what was said after it.
    """
    sql = _PERSON_TURNS + (_THROUGH if through is not None else "") + _LATEST_FIRST
    params = {"conversation_id": conversation_id, "mark": through, "limit": limit}
    return list(reversed(await _facts(lane, sql, params)))


async def agent_replies_before(
    lane: Lane, *, conversation_id: str, limit: int, before: str | None = None
) -> Sequence[TurnFacts]:
    """The agent's latest ``limit`` replies in one conversation, oldest first.

    ``before`` (a turn ID) leaves out that turn and every later one; a turn not stored yet
    (a candidate reply) leaves nothing out.
    """
    sql = _AGENT_REPLIES + (_BEFORE if before is not None else "") + _LATEST_FIRST
    params = {"conversation_id": conversation_id, "mark": before, "limit": limit}
    return list(reversed(await _facts(lane, sql, params)))


_PERSON_SINCE = (
    _FACTS + "WHERE d.agent = %(agent)s AND d.person_id = %(person_id)s AND d.role = 'person' "
    "AND d.at >= %(since)s AND d.at <= %(until)s ORDER BY d.at LIMIT 5000"
)


async def person_turns_since(
    lane: Lane, *, agent: str, person_id: str, since: datetime, until: datetime
) -> Sequence[TurnFacts]:
    """What one person said to the agent in a window, on every channel, oldest first."""
    params = {"agent": agent, "person_id": person_id, "since": since, "until": until}
    return await _facts(lane, _PERSON_SINCE, params)


_CHANNEL_SINCE = (
    _FACTS + "JOIN channels c ON c.id = d.channel_id "
    "WHERE d.agent = %(agent)s AND c.key = %(channel_key)s AND d.role = 'person' "
    "AND d.at >= %(since)s AND d.at <= %(until)s ORDER BY d.at LIMIT 5000"
)


async def channel_turns_since(
    lane: Lane, *, agent: str, channel_key: str, since: datetime, until: datetime
) -> Sequence[TurnFacts]:
    """What anyone said on one channel in a window, oldest first."""
    params = {"agent": agent, "channel_key": channel_key, "since": since, "until": until}
    return await _facts(lane, _CHANNEL_SINCE, params)


@dataclass(frozen=True, slots=True)
class ToolResultFacts:
    """What a rule reads of a tool call that returned something."""

    id: str
    name: str
    result: str


_TOOL_RESULTS = (
    "SELECT id, name, result FROM tool_calls "
    "WHERE activation_id = %(activation_id)s AND result IS NOT NULL ORDER BY round, seq"
)


async def tool_results(lane: Lane, *, activation_id: str) -> list[ToolResultFacts]:
    """The tool calls of one activation that returned something, in the order they ran."""
    rows = await lane.rows(_TOOL_RESULTS, {"activation_id": activation_id})
    return [ToolResultFacts(**row) for row in rows]


async def turns_by_id(lane: Lane, *, turn_ids: Sequence[str]) -> Sequence[TurnFacts]:
    """The stored dialog turns among ``turn_ids`` (any order; unknown IDs are skipped)."""
    return await _facts(
        lane, _FACTS + "WHERE d.id = ANY(%(ids)s::varchar[])", {"ids": list(turn_ids)}
    )


_PERSON_OF_SPEAKER = (
    "SELECT person_id FROM identities WHERE agent = %(agent)s AND service = %(service)s "
    "AND channel = %(channel)s AND speaker_id = %(speaker_id)s"
)


async def person_of_speaker(
    lane: Lane, *, agent: str, service: str, channel: str, speaker_id: str
) -> str | None:
    """The person an identity belongs to, if the agent has met them."""
    row = await lane.first(
        _PERSON_OF_SPEAKER,
        {"agent": agent, "service": service, "channel": channel, "speaker_id": speaker_id},
    )
    return None if row is None else str(row["person_id"])


async def record_firing(session: AsyncSession, *, row: GuardrailFiringRow) -> GuardrailFiringRow:
    """Store a firing once per exchange and rule; a retry gets the row first stored."""
    values = row.model_dump()
    statement = (
        insert(GuardrailFiringRow)
        .values(**values)
        .on_conflict_do_nothing(constraint="uq_guardrail_firings_exchange")
    )
    await session.exec(statement)
    await session.commit()
    if row.activation_id is None:
        return row
    stored = await session.exec(
        select(GuardrailFiringRow).where(
            GuardrailFiringRow.activation_id == row.activation_id,
            GuardrailFiringRow.rule_id == row.rule_id,
        )
    )
    return stored.one()


async def get_firing(session: AsyncSession, *, firing_id: str) -> GuardrailFiringRow | None:
    """One firing by ID."""
    return await session.get(GuardrailFiringRow, firing_id)


async def mark_notified(session: AsyncSession, *, firing_id: str, at: datetime) -> None:
    """Note that the supervisor's webhook took the firing."""
    await session.exec(
        update(GuardrailFiringRow)
        .where(col(GuardrailFiringRow.id) == firing_id)
        .values(notified_at=at)
    )
    await session.commit()


async def list_firings(
    session: AsyncSession, *, agent: str | None = None, limit: int = 50
) -> Sequence[GuardrailFiringRow]:
    """The latest firings (of one agent, or all), newest last."""
    statement = select(GuardrailFiringRow)
    if agent is not None:
        statement = statement.where(GuardrailFiringRow.agent == agent)
    rows = await session.exec(
        statement.order_by(col(GuardrailFiringRow.fired_at).desc()).limit(limit)
    )
    return list(reversed(rows.all()))


async def set_cooldown(session: AsyncSession, *, row: GuardrailCooldownRow) -> None:
    """Start or extend a cooldown (a later end wins; an earlier one never shortens it)."""
    statement = insert(GuardrailCooldownRow).values(**row.model_dump())
    statement = statement.on_conflict_do_update(
        index_elements=["agent", "scope", "key"],
        set_={
            "until": func.greatest(GuardrailCooldownRow.until, statement.excluded.until),
            "rule_id": statement.excluded.rule_id,
            "firing_id": statement.excluded.firing_id,
        },
    )
    await session.exec(statement)
    await session.commit()


_COOLDOWNS = (
    "SELECT c.agent, c.scope, c.key, c.until, c.rule_id, c.firing_id "
    "FROM guardrail_cooldowns c "
    "JOIN unnest(%(scopes)s::varchar[], %(keys)s::text[]) AS k (scope, key) "
    "ON c.scope = k.scope AND c.key = k.key "
    "WHERE c.agent = %(agent)s AND c.until > %(now)s"
)


async def active_cooldown(
    lane: Lane, *, agent: str, keys: Sequence[tuple[str, str]], now: datetime
) -> GuardrailCooldownRow | None:
    """The cooldown in force now for any of ``keys`` (``(scope, key)`` pairs), if one is.

    One statement on the driver lane for all of them (every reply is screened); the first of
    ``keys`` in force wins.
    """
    if not keys:
        return None
    params = {
        "agent": agent,
        "now": now,
        "scopes": [scope for scope, _ in keys],
        "keys": [key for _, key in keys],
    }
    rows = await lane.rows(_COOLDOWNS, params)
    in_force = {(row["scope"], row["key"]): GuardrailCooldownRow(**row) for row in rows}
    return next((in_force[k] for k in keys if k in in_force), None)


async def fired_recently(
    session: AsyncSession,
    *,
    agent: str,
    rule_id: str,
    person_id: str | None,
    channel_key: str | None,
    since: datetime,
    until: datetime,
    other_than: str | None,
) -> bool:
    """Whether ``rule_id`` fired between ``since`` and ``until`` in another exchange.

    Scoped to the person, or to the channel when ``person_id`` is None; the exchange of
    activation ``other_than`` does not count.
    """
    scope = (
        GuardrailFiringRow.person_id == person_id
        if person_id is not None
        else GuardrailFiringRow.channel_key == channel_key
    )
    statement = select(
        select(GuardrailFiringRow.id)
        .where(
            GuardrailFiringRow.agent == agent,
            GuardrailFiringRow.rule_id == rule_id,
            col(GuardrailFiringRow.fired_at) >= since,
            col(GuardrailFiringRow.fired_at) <= until,
            scope,
            col(GuardrailFiringRow.activation_id).is_distinct_from(other_than),
        )
        .exists()
    )
    return bool((await session.exec(statement)).one())


_BLOCKING: LiteralString = """
    SELECT id, agent, rule_id, actions, evidence, summary, person_id, channel_key,
           conversation_id, activation_id, blocking, fired_at, notified_at
      FROM guardrail_firings
     WHERE activation_id = %(activation_id)s AND blocking
"""


async def blocking_firings_on(lane: Lane, *, activation_id: str) -> list[GuardrailFiringRow]:
    """The firings blocking rules recorded in one activation's screen (every exchange asks)."""
    rows = await lane.rows(_BLOCKING, {"activation_id": activation_id})
    return [GuardrailFiringRow(**row) for row in rows]
