"""Deleting an agent: every row that belongs to it, in one transaction.

Which tables belong to an agent is read from the tables themselves: every table with an
``agent`` column holds the agent's rows (:func:`owned_tables`), except the ones kept on
purpose (:data:`KEPT`). A table added later is covered without a change here, and
``tests/usecases/test_deletion.py`` fails if one is not. Rows that name no agent are found
through the rows that do: stored prompts (and their tool-loop extensions) through the agent's
activations, Telegram message IDs through its outbox.

Usage records are accounting: they are summed into ``usage_daily`` (per agent, day, channel,
provider, model, stage and tier) before they go, in the same transaction, so billing totals
survive the agent.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field

from sqlalchemy import Table
from sqlmodel import SQLModel
from sqlmodel.ext.asyncio.session import AsyncSession

import store.tables  # noqa: F401  (registers every table in the metadata read below)
from schemas.ids import new_ulid
from store.queries.run_retention import ROLL_UP
from store.sql import execute, rowcount
from store.tables.columns import utcnow

AGENT_COLUMNS = ("agent", "agent_handle")
"""Column names that name a row's agent."""

KEPT: dict[str, str] = {
    "usage_daily": "usage totals per day, channel and model, for billing",
    "agent_deletions": "the audit of the deletion: who, when, rows erased per table",
}
"""Tables whose rows of a deleted agent stay, each with why."""

_ALL_ROWS = 2**62
"""A batch size that takes every usage record at once (the roll-up is written in batches)."""


def agent_column(table: Table) -> str | None:
    """The column of ``table`` that names its row's agent, if it has one (``agents``: its key)."""
    if table.name == "agents":
        return "handle"
    return next((name for name in AGENT_COLUMNS if name in table.columns), None)


def owned_tables() -> list[Table]:
    """Every table with an agent column whose rows go with the agent, children first.

    Ordered by foreign keys (a table referring to another is emptied before it), so no
    constraint without a cascade stops the deletion; the ``agents`` row goes last.
    """
    ordered = reversed(SQLModel.metadata.sorted_tables)
    return [t for t in ordered if agent_column(t) is not None and t.name not in KEPT]


@dataclass
class AgentErasure:
    """What deleting an agent removed: rows per table."""

    rows: dict[str, int] = field(default_factory=dict)
    usage_summed: int = 0
    """Usage records summed into ``usage_daily`` before they were deleted."""
    tokens_revoked: int = 0
    """Web channel tokens that were limited to this agent alone, now revoked."""
    tokens_narrowed: int = 0
    """Web channel tokens that named this agent among others, which no longer name it."""

    def add(self, table: str, count: int) -> None:
        """Count ``count`` rows deleted from ``table``."""
        if count:
            self.rows[table] = self.rows.get(table, 0) + count


def _activation_ids() -> str:
    """SQL selecting every activation ID an agent-owned table ties to the agent ``:a``."""
    selects = ["SELECT id FROM activations WHERE agent = :a"]
    for table in owned_tables():
        if "activation_id" in table.columns:
            selects.append(
                f"SELECT activation_id FROM {table.name} "
                f"WHERE {agent_column(table)} = :a AND activation_id IS NOT NULL"
            )
    return " UNION ".join(selects)


async def erase_agent(
    session: AsyncSession,
    *,
    agent: str,
    actor: str,
    keys: int,
    activations: Sequence[str] = (),
) -> AgentErasure:
    """Delete every row of ``agent`` and write the deletion's audit entry; commits.

    One transaction: a failure leaves every row in place, and running it again finishes.
    Tables whose rows name no agent go first, found through the rows that do.

    Args:
        session: A session without a transaction of its own running.
        agent: The handle.
        actor: Who deleted it (kept in the audit).
        keys: Payload keys the deletion shredded (kept in the audit).
        activations: Activation IDs known to be the agent's beside those its rows name (the
            runs the deletion ended, whose prompt may be all they left).
    """
    p: dict[str, object] = {"a": agent, "runs": list(activations)}
    done = AgentErasure()
    summed = await execute(session, ROLL_UP, {**p, "before": utcnow(), "n": _ALL_ROWS})
    done.usage_summed = int(summed.one().moved)
    prompts = (
        f"SELECT id FROM prompts WHERE activation_id IN ({_activation_ids()}) "
        "OR activation_id = ANY(CAST(:runs AS varchar[]))"
    )
    done.add(
        "prompt_extensions",
        await rowcount(session, f"DELETE FROM prompt_extensions WHERE prompt_id IN ({prompts})", p),
    )
    done.add("prompts", await rowcount(session, f"DELETE FROM prompts WHERE id IN ({prompts})", p))
    done.add(
        "telegram_sent",
        await rowcount(
            session,
            "DELETE FROM telegram_sent WHERE outbox_id IN (SELECT id FROM outbox WHERE agent = :a)",
            p,
        ),
    )
    for table in owned_tables():
        column = agent_column(table)
        done.add(
            table.name, await rowcount(session, f"DELETE FROM {table.name} WHERE {column} = :a", p)
        )
    # A token limited to this agent alone would, with the handle taken out, be limited to
    # nothing, which means every agent: it is revoked instead.
    done.tokens_revoked = await rowcount(
        session,
        "UPDATE web_tokens SET revoked_at = coalesce(revoked_at, now()) "
        "WHERE agents = ARRAY[CAST(:a AS varchar)] AND revoked_at IS NULL",
        p,
    )
    done.tokens_narrowed = await rowcount(
        session,
        "UPDATE web_tokens SET agents = array_remove(agents, CAST(:a AS varchar)) "
        "WHERE :a = ANY(agents) AND cardinality(agents) > 1",
        p,
    )
    await execute(
        session,
        "INSERT INTO agent_deletions (id, agent, deleted_by, deleted_at, erased, keys_shredded) "
        "VALUES (:id, :a, :by, now(), CAST(:erased AS jsonb), :keys)",
        {
            **p,
            "id": new_ulid(),
            "by": actor,
            "erased": json.dumps(done.rows, sort_keys=True),
            "keys": keys,
        },
    )
    await session.commit()
    return done
