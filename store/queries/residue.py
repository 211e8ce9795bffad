"""Residue items: the live ones of a memory compartment, and carrying a pass's items forward.

An item is live while it is not retired and was carried within ``expire_days``. A pass's items
are matched to the live ones word for word (``schemas.residue.same_item``): a match is carried
(reinforced, its age kept), anything else is written new (its age starts now). Past the cap,
the least recently carried are retired. Writes to one channel run under an advisory lock, and
a pass that already wrote (its step retried after its worker died) writes nothing more.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlmodel.ext.asyncio.session import AsyncSession

from schemas.ids import new_ulid
from schemas.residue import ResidueItem, ResidueResult, same_item
from store.lane import Lane
from store.sql import execute, rowcount

PRUNE_AFTER = timedelta(days=30)
"""Retired or expired items are deleted this long after they stopped being live."""


@dataclass(frozen=True)
class Carry:
    """One pass's items for the channel a conversation was on.

    Attributes:
        agent: Whose residue.
        channel_id: The conversation's channel (a row of ``channels``).
        compartment: Every channel sharing its memory (itself included): the live items the
            pass saw, and the ones the cap counts.
        conversation_id: The conversation that just ended.
        run_id: The pass's ID.
        texts: The pass's items, validated and descriptive.
    """

    agent: str
    channel_id: str
    compartment: Sequence[str]
    conversation_id: str
    run_id: str
    texts: Sequence[str]


async def channel_id_of(session: AsyncSession, *, agent: str, key: str) -> str | None:
    """The ID of the agent's channel ``key`` (``service:channel``), if it has one."""
    rows = await execute(
        session, "SELECT id FROM channels WHERE agent = :a AND key = :k", {"a": agent, "k": key}
    )
    row = rows.first()
    return str(row.id) if row is not None else None


async def live_items(
    session: AsyncSession,
    *,
    agent: str,
    channel_ids: Sequence[str],
    now: datetime,
    expire: timedelta,
    limit: int,
) -> list[ResidueItem]:
    """The live items of ``channel_ids`` as of ``now``, most recently carried first."""
    rows = await execute(
        session,
        "SELECT id, text, since, last_carried_at, carried FROM residue_items "
        "WHERE agent = :a AND channel_id = ANY(:ch) AND retired_at IS NULL "
        "AND last_carried_at > :cutoff AND last_carried_at <= :now "
        "ORDER BY last_carried_at DESC, since DESC, id DESC LIMIT :n",
        {"a": agent, "ch": list(channel_ids), "cutoff": now - expire, "now": now, "n": limit},
    )
    return [ResidueItem.model_validate(dict(r._mapping)) for r in rows]


# The live items of the channel ``key`` and of those sharing its memory group (as
# ``memory_formation.compartment``). On the driver lane: every turn's prompt reads them.
_LIVE_ITEMS_ON = """
    SELECT id, text, since, last_carried_at, carried FROM residue_items
     WHERE agent = %(a)s
       AND channel_id IN (
           SELECT c.id FROM channels AS cur JOIN channels AS c ON c.agent = cur.agent
              AND (c.id = cur.id
                   OR (cur.memory_group IS NOT NULL AND c.memory_group = cur.memory_group))
            WHERE cur.agent = %(a)s AND cur.key = %(key)s)
       AND retired_at IS NULL
       AND last_carried_at > %(cutoff)s AND last_carried_at <= %(now)s
     ORDER BY last_carried_at DESC, since DESC, id DESC
     LIMIT %(n)s
"""


async def live_items_on(
    lane: Lane,
    *,
    agent: str,
    channel_key: str,
    now: datetime,
    expire: timedelta,
    limit: int,
) -> list[ResidueItem]:
    """The live items of ``channel_key``'s memory compartment, in one statement (a turn's)."""
    rows = await lane.rows(
        _LIVE_ITEMS_ON,
        {"a": agent, "key": channel_key, "cutoff": now - expire, "now": now, "n": limit},
    )
    return [ResidueItem.model_validate(row) for row in rows]


async def carry(
    session: AsyncSession, *, carry: Carry, now: datetime, expire: timedelta, max_items: int
) -> ResidueResult:
    """Carry a pass's items forward; returns what it did. Does not commit."""
    await execute(
        session,
        "SELECT pg_advisory_xact_lock(hashtext(:k))",
        {"k": f"residue:{carry.agent}:{carry.channel_id}"},
    )
    done = await execute(
        session, "SELECT 1 FROM residue_items WHERE run_id = :r LIMIT 1", {"r": carry.run_id}
    )
    if done.first() is not None:
        return ResidueResult()
    held = await live_items(
        session,
        agent=carry.agent,
        channel_ids=carry.compartment,
        now=now,
        expire=expire,
        limit=1000,
    )
    result = ResidueResult()
    seen: list[str] = []
    for text in carry.texts:
        if any(same_item(text, s) for s in seen):
            continue  # the pass said it twice
        seen.append(text)
        match = next((h for h in held if same_item(text, h.text)), None)
        if match is not None:
            await execute(
                session,
                "UPDATE residue_items SET last_carried_at = :now, carried = carried + 1, "
                "run_id = :r, conversation_id = :c WHERE id = :id",
                {"now": now, "r": carry.run_id, "c": carry.conversation_id, "id": match.id},
            )
            result.carried += 1
            continue
        await execute(
            session,
            "INSERT INTO residue_items (id, agent, channel_id, text, since, last_carried_at, "
            "carried, conversation_id, run_id) VALUES (:id, :a, :ch, :t, :now, :now, 0, :c, :r)",
            {
                "id": new_ulid(),
                "a": carry.agent,
                "ch": carry.channel_id,
                "t": text,
                "now": now,
                "c": carry.conversation_id,
                "r": carry.run_id,
            },
        )
        result.written += 1
    result.retired = await _retire_past_cap(session, carry, now, expire, max_items)
    await execute(
        session,
        "DELETE FROM residue_items WHERE agent = :a AND channel_id = :ch "
        "AND COALESCE(retired_at, last_carried_at + :expire) < :before",
        {"a": carry.agent, "ch": carry.channel_id, "expire": expire, "before": now - PRUNE_AFTER},
    )
    return result


async def _retire_past_cap(
    session: AsyncSession, carry: Carry, now: datetime, expire: timedelta, max_items: int
) -> int:
    """Retire the live items of the compartment beyond the ``max_items`` most recently carried.

    This pass's own items rank first, so the cap never drops what was just carried.
    """
    return await rowcount(
        session,
        "UPDATE residue_items SET retired_at = :now WHERE id IN ("
        "SELECT id FROM residue_items WHERE agent = :a AND channel_id = ANY(:ch) "
        "AND retired_at IS NULL AND last_carried_at > :cutoff "
        "ORDER BY (run_id = :r) DESC, last_carried_at DESC, since DESC, id DESC OFFSET :n)",
        {
            "now": now,
            "a": carry.agent,
            "ch": list(carry.compartment),
            "cutoff": now - expire,
            "r": carry.run_id,
            "n": max_items,
        },
    )
