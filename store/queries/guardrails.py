"""Guardrail queries: the history rules read, firings recorded once, cooldowns set and read."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Protocol

from sqlalchemy import Executable, func, tuple_, update
from sqlalchemy import select as select_columns
from sqlalchemy.dialects.postgresql import insert
from sqlmodel import col, select
from sqlmodel.ext.asyncio.session import AsyncSession

from store.tables import DialogTurnRow, Identity
from store.tables.agents import Channel
from store.tables.autonomy import ToolCallRow
from store.tables.guardrails import GuardrailCooldownRow, GuardrailFiringRow


class TurnFacts(Protocol):
    """What a rule reads of a stored turn: never its vectors or its text-search columns."""

    id: str
    role: str
    text: str
    at: datetime
    person_id: str | None
    conversation_id: str


_FACTS = (
    col(DialogTurnRow.id),
    col(DialogTurnRow.role),
    col(DialogTurnRow.text),
    col(DialogTurnRow.at),
    col(DialogTurnRow.person_id),
    col(DialogTurnRow.conversation_id),
)
"""The columns of :class:`TurnFacts`: a whole row would parse each turn's embedding too."""


async def _facts(session: AsyncSession, statement: Executable) -> list[TurnFacts]:
    """The rows of ``statement``, a select of :data:`_FACTS`, on the session's connection."""
    connection = await session.connection()
    rows: list[TurnFacts] = list((await connection.execute(statement)).all())
    return rows


async def person_turns_in_conversation(
    session: AsyncSession, *, conversation_id: str, limit: int, through: str | None = None
) -> Sequence[TurnFacts]:
    """The latest ``limit`` turns people said in one conversation, oldest first.

    ``through`` ends the stretch at that turn, so an exchange evaluated late is not judged
    by what was said after it.
    """
    statement = select_columns(*_FACTS).where(
        col(DialogTurnRow.conversation_id) == conversation_id, col(DialogTurnRow.role) == "person"
    )
    if through is not None:
        mark = select(DialogTurnRow.seq).where(col(DialogTurnRow.id) == through).scalar_subquery()
        statement = statement.where(
            col(DialogTurnRow.seq) <= func.coalesce(mark, col(DialogTurnRow.seq))
        )
    statement = statement.order_by(col(DialogTurnRow.seq).desc()).limit(limit)
    return list(reversed(await _facts(session, statement)))


async def agent_replies_before(
    session: AsyncSession, *, conversation_id: str, limit: int, before: str | None = None
) -> Sequence[TurnFacts]:
    """The agent's latest ``limit`` replies in one conversation, oldest first.

    ``before`` (a turn ID) leaves out that turn and every later one; a turn not stored yet
    (a candidate reply) leaves nothing out.
    """
    statement = select_columns(*_FACTS).where(
        col(DialogTurnRow.conversation_id) == conversation_id, col(DialogTurnRow.role) == "agent"
    )
    if before is not None:
        mark = select(DialogTurnRow.seq).where(col(DialogTurnRow.id) == before).scalar_subquery()
        statement = statement.where(
            col(DialogTurnRow.seq) < func.coalesce(mark, col(DialogTurnRow.seq) + 1)
        )
    statement = statement.order_by(col(DialogTurnRow.seq).desc()).limit(limit)
    return list(reversed(await _facts(session, statement)))


async def person_turns_since(
    session: AsyncSession, *, agent: str, person_id: str, since: datetime, until: datetime
) -> Sequence[TurnFacts]:
    """What one person said to the agent in a window, on every channel, oldest first."""
    return await _facts(
        session,
        select_columns(*_FACTS)
        .where(
            col(DialogTurnRow.agent) == agent,
            col(DialogTurnRow.person_id) == person_id,
            col(DialogTurnRow.role) == "person",
            col(DialogTurnRow.at) >= since,
            col(DialogTurnRow.at) <= until,
        )
        .order_by(col(DialogTurnRow.at))
        .limit(5000),
    )


async def channel_turns_since(
    session: AsyncSession, *, agent: str, channel_key: str, since: datetime, until: datetime
) -> Sequence[TurnFacts]:
    """What anyone said on one channel in a window, oldest first."""
    return await _facts(
        session,
        select_columns(*_FACTS)
        .join(Channel, col(Channel.id) == DialogTurnRow.channel_id)
        .where(
            col(DialogTurnRow.agent) == agent,
            col(Channel.key) == channel_key,
            col(DialogTurnRow.role) == "person",
            col(DialogTurnRow.at) >= since,
            col(DialogTurnRow.at) <= until,
        )
        .order_by(col(DialogTurnRow.at))
        .limit(5000),
    )


async def tool_results(session: AsyncSession, *, activation_id: str) -> Sequence[ToolCallRow]:
    """The tool calls of one activation that returned something."""
    rows = await session.exec(
        select(ToolCallRow)
        .where(ToolCallRow.activation_id == activation_id, col(ToolCallRow.result).is_not(None))
        .order_by(col(ToolCallRow.round), col(ToolCallRow.seq))
    )
    return rows.all()


async def turns_by_id(session: AsyncSession, *, turn_ids: Sequence[str]) -> Sequence[TurnFacts]:
    """The stored dialog turns among ``turn_ids`` (any order; unknown IDs are skipped)."""
    return await _facts(session, select_columns(*_FACTS).where(col(DialogTurnRow.id).in_(turn_ids)))


async def person_of_speaker(
    session: AsyncSession, *, agent: str, service: str, channel: str, speaker_id: str
) -> str | None:
    """The person an identity belongs to, if the agent has met them."""
    rows = await session.exec(
        select(Identity.person_id).where(
            Identity.agent == agent,
            Identity.service == service,
            Identity.channel == channel,
            Identity.speaker_id == speaker_id,
        )
    )
    return rows.first()


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


async def active_cooldown(
    session: AsyncSession, *, agent: str, keys: Sequence[tuple[str, str]], now: datetime
) -> GuardrailCooldownRow | None:
    """The cooldown in force now for any of ``keys`` (``(scope, key)`` pairs), if one is.

    One statement for all of them; the first of ``keys`` in force wins.
    """
    if not keys:
        return None
    rows = (
        await session.exec(
            select(GuardrailCooldownRow).where(
                col(GuardrailCooldownRow.agent) == agent,
                tuple_(col(GuardrailCooldownRow.scope), col(GuardrailCooldownRow.key)).in_(
                    list(keys)
                ),
                col(GuardrailCooldownRow.until) > now,
            )
        )
    ).all()
    in_force = {(row.scope, row.key): row for row in rows}
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


async def blocking_firings(
    session: AsyncSession, *, activation_id: str
) -> Sequence[GuardrailFiringRow]:
    """The firings blocking rules recorded in one activation's screen."""
    rows = await session.exec(
        select(GuardrailFiringRow).where(
            GuardrailFiringRow.activation_id == activation_id,
            col(GuardrailFiringRow.blocking).is_(True),
        )
    )
    return rows.all()
