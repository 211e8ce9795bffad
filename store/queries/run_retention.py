"""Retention of per-message run records: prompts, drafts, outcomes, decisions, outbox, usage.

Every activation leaves a few rows behind (its prompt, draft, outcome, speak decision, outbox
message and usage records). They are needed while the turn and its deferred deliberation run,
and for a while after to answer "what happened"; past the retention window they go, in
bounded batches, one transaction each, so a large backlog never holds long locks.

Usage records are accounting: before they go they are added into ``usage_daily`` (one row
per agent, day, channel, provider, model, stage and tier) in the same statement, so totals
over whole days never change (``store.queries.usage_report`` reads both).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from datetime import datetime

from sqlmodel.ext.asyncio.session import AsyncSession

from schemas.delivery import DeliveryStatus
from store.sql import execute

BATCH = 1000
"""Rows deleted per transaction."""

BUDGET_S = 8.0
"""Seconds one purge spends deleting, well inside its activity's 15 s: a backlog larger than
that (the first purge of a long-lived agent) is worked off over the next firings."""

SETTLED = (DeliveryStatus.DELIVERED, DeliveryStatus.FAILED, DeliveryStatus.BLOCKED)
"""Outbox states no delivery run will touch again; pending and awaiting pickup stay."""

_NOT_ANOTHER_AGENTS = " AND ".join(
    f"NOT EXISTS (SELECT 1 FROM {table} o WHERE o.{column} = p.activation_id AND o.agent <> :a)"
    for table, column in (
        ("activations", "id"),
        ("outbox", "activation_id"),
        ("speak_decisions", "activation_id"),
        ("tool_calls", "activation_id"),
    )
)
"""Prompts name no agent: one is the agent's, or nobody's, unless a table ties it to another."""

_PROMPTS = (
    "SELECT p.id FROM prompts p WHERE p.created_at < :before "
    f"AND {_NOT_ANOTHER_AGENTS} ORDER BY p.created_at LIMIT :n"
)

ROLL_UP = """
WITH moved AS (
    DELETE FROM usage_records WHERE record_id IN (
        SELECT record_id FROM usage_records
         WHERE agent = :a AND occurred_at < :before
         ORDER BY occurred_at LIMIT :n FOR UPDATE SKIP LOCKED)
    RETURNING *
), sums AS (
    SELECT agent, CAST(timezone('UTC', occurred_at) AS date) AS day,
           coalesce(channel, '') AS channel, provider, model, stage, tier,
           count(*) AS records, sum(input_tokens) AS input_tokens,
           sum(output_tokens) AS output_tokens, sum(cached_read_tokens) AS cached_read_tokens,
           sum(cached_write_tokens) AS cached_write_tokens, sum(units) AS units,
           coalesce(sum(cost_usd), 0.0) AS cost_usd,
           count(*) FILTER (WHERE cost_usd IS NULL) AS unpriced
      FROM moved GROUP BY 1, 2, 3, 4, 5, 6, 7
), added AS (
    INSERT INTO usage_daily AS d (agent, day, channel, provider, model, stage, tier, records,
                                  input_tokens, output_tokens, cached_read_tokens,
                                  cached_write_tokens, units, cost_usd, unpriced)
    SELECT agent, day, channel, provider, model, stage, tier, records, input_tokens,
           output_tokens, cached_read_tokens, cached_write_tokens, units, cost_usd, unpriced
      FROM sums
    ON CONFLICT (agent, day, channel, provider, model, stage, tier) DO UPDATE SET
        records = d.records + EXCLUDED.records,
        input_tokens = d.input_tokens + EXCLUDED.input_tokens,
        output_tokens = d.output_tokens + EXCLUDED.output_tokens,
        cached_read_tokens = d.cached_read_tokens + EXCLUDED.cached_read_tokens,
        cached_write_tokens = d.cached_write_tokens + EXCLUDED.cached_write_tokens,
        units = d.units + EXCLUDED.units,
        cost_usd = d.cost_usd + EXCLUDED.cost_usd,
        unpriced = d.unpriced + EXCLUDED.unpriced
    RETURNING 1
)
SELECT (SELECT count(*) FROM moved) AS moved, (SELECT count(*) FROM added) AS added
"""
"""Delete one batch of old ledger rows and add them into their days' sums, atomically."""


@dataclass(frozen=True)
class RunCutoffs:
    """Rows older than these instants go (each per its table's timestamp)."""

    records: datetime
    """Activation outcomes, speak decisions, settled outbox, Telegram message IDs."""
    turn_scratch: datetime
    """Prompts and drafts (never younger than a day: deferred deliberation reads them)."""
    usage: datetime
    """Usage records, rolled up first; a UTC midnight, so a day is all raw or all summed."""
    guardrails: datetime
    """Guardrail firings."""


@dataclass
class RunPruning:
    """Rows removed per table (usage records: rolled up, then removed)."""

    rows: dict[str, int] = field(default_factory=dict)
    deadline: float = field(default_factory=lambda: time.monotonic() + BUDGET_S)

    @property
    def out_of_time(self) -> bool:
        """Whether the budget is spent: the remaining batches wait for the next purge."""
        return time.monotonic() >= self.deadline

    def add(self, table: str, count: int) -> None:
        """Count ``count`` more rows removed from ``table``."""
        if count:
            self.rows[table] = self.rows.get(table, 0) + count


async def _batches(
    session: AsyncSession, sql: str, params: dict[str, object], done: RunPruning
) -> int:
    """Run a bounded ``DELETE`` until it deletes a short batch; one commit per batch."""
    total = 0
    while not done.out_of_time:
        deleted = int((await execute(session, sql, {**params, "n": BATCH})).rowcount or 0)
        await session.commit()
        total += deleted
        if deleted < BATCH:
            break
    return total


def _bounded_delete(table: str, key: str, condition: str) -> str:
    return (
        f"DELETE FROM {table} WHERE {key} IN (SELECT {key} FROM {table} "
        f"WHERE {condition} LIMIT :n FOR UPDATE SKIP LOCKED)"
    )


async def prune_run_records(
    session: AsyncSession, *, agent: str, cutoffs: RunCutoffs, budget_s: float = BUDGET_S
) -> RunPruning:
    """Delete the agent's per-message rows older than ``cutoffs``; commits per batch.

    Stops starting batches after ``budget_s`` seconds; what is left goes at the next call.
    """
    done = RunPruning(deadline=time.monotonic() + budget_s)
    scratch = {"a": agent, "before": cutoffs.turn_scratch}
    while not done.out_of_time:
        ids = [str(r.id) for r in await execute(session, _PROMPTS, {**scratch, "n": BATCH})]
        if ids:
            params = {"ids": ids}
            await execute(
                session,
                "DELETE FROM prompt_extensions WHERE prompt_id = ANY(CAST(:ids AS varchar[]))",
                params,
            )
            done.add(
                "prompts",
                int(
                    (
                        await execute(
                            session,
                            "DELETE FROM prompts WHERE id = ANY(CAST(:ids AS varchar[]))",
                            params,
                        )
                    ).rowcount
                    or 0
                ),
            )
        await session.commit()
        if len(ids) < BATCH:
            break
    done.add(
        "drafts",
        await _batches(
            session,
            _bounded_delete("drafts", "id", "agent = :a AND created_at < :before"),
            scratch,
            done,
        ),
    )
    records = {"a": agent, "before": cutoffs.records}
    for table, key, at in (
        ("activations", "id", "completed_at"),
        ("speak_decisions", "activation_id", "decided_at"),
        ("telegram_inbound", "event_id", "received_at"),
        # A retried place_call reads its intent minutes after it was written, never weeks.
        ("dial_intents", "id", "created_at"),
    ):
        condition = f"agent = :a AND {at} < :before"
        sql = _bounded_delete(table, key, condition)
        done.add(table, await _batches(session, sql, records, done))
    done.add("outbox", await _prune_outbox(session, agent=agent, before=cutoffs.records, done=done))
    guardrails = {"a": agent, "before": cutoffs.guardrails}
    condition = "agent = :a AND fired_at < :before"
    done.add(
        "guardrail_firings",
        await _batches(
            session, _bounded_delete("guardrail_firings", "id", condition), guardrails, done
        ),
    )
    done.add(
        "usage_records",
        await roll_up_usage(session, agent=agent, before=cutoffs.usage, done=done),
    )
    return done


async def _prune_outbox(
    session: AsyncSession, *, agent: str, before: datetime, done: RunPruning
) -> int:
    """Settled outbox rows go with the Telegram parts that record their sending."""
    sql = (
        "WITH gone AS ("
        + _bounded_delete(
            "outbox",
            "id",
            "agent = :a AND created_at < :before AND status = ANY(CAST(:settled AS varchar[]))",
        )
        + " RETURNING id), parts AS (DELETE FROM telegram_sent WHERE outbox_id IN "
        "(SELECT id FROM gone)) SELECT count(*) FROM gone"
    )
    params = {"a": agent, "before": before, "settled": [str(s) for s in SETTLED]}
    total = 0
    while not done.out_of_time:
        deleted = int((await execute(session, sql, {**params, "n": BATCH})).scalar_one())
        await session.commit()
        total += deleted
        if deleted < BATCH:
            break
    return total


async def roll_up_usage(
    session: AsyncSession, *, agent: str, before: datetime, done: RunPruning | None = None
) -> int:
    """Move the agent's ledger rows older than ``before`` into daily sums; returns rows moved.

    Each batch is one statement (delete and add), so a crash never counts a record twice or
    drops it; with ``done``, stops when its budget is spent.
    """
    budget = done or RunPruning()
    total = 0
    while not budget.out_of_time:
        row = (await execute(session, ROLL_UP, {"a": agent, "before": before, "n": BATCH})).one()
        await session.commit()
        total += int(row.moved)
        if row.moved < BATCH:
            break
    return total
