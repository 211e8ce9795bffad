"""Per-message run records past their window go; younger ones, unsettled outbox and totals stay.

Runs the maintenance purge (``memory.purge``) against the real PostgreSQL, as the maintenance
schedule does, with rows written straight into the tables at chosen ages.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from activities.memory.retention import RetentionActivities, run_cutoffs
from schemas.delivery import DeliveryStatus
from schemas.ids import new_ulid
from schemas.memory import MemorySettings
from schemas.memory_formation import PurgeInput
from schemas.usage import UsageDimension, UsageQuery
from store.db import Database
from store.queries import run_retention
from store.queries.ledger import add_usage
from store.queries.usage_report import usage_report
from store.sql import execute
from tests.memory.conftest import NewAgent
from tests.observability.records import usage

NOW = datetime(2026, 6, 15, 12, 0, tzinfo=UTC)
SETTINGS = MemorySettings(run_record_retention_days=10, guardrail_retention_days=20)
OLD, YOUNG = NOW - timedelta(days=12), NOW - timedelta(days=5)


async def _sql(db: Database, sql: str, **params: Any) -> None:
    async with db.session() as session:
        await execute(session, sql, params)
        await session.commit()


async def _count(db: Database, table: str, agent: str) -> int:
    async with db.session() as session:
        result = await execute(
            session, f"SELECT count(*) FROM {table} WHERE agent = :a", {"a": agent}
        )
        return int(result.scalar_one())


async def _turn(db: Database, agent: str, at: datetime, status: DeliveryStatus) -> str:
    """One message's rows: prompt, draft, outcome, decision, outbox, Telegram ID, dial, firing."""
    activation, event = new_ulid(), new_ulid()
    p = {"a": agent, "act": activation, "ev": event, "at": at, "id": new_ulid()}
    await _sql(
        db,
        "INSERT INTO activations (id, agent, event_id, trigger, outcome, degraded, completed_at) "
        "VALUES (:act, :a, :ev, 'message', 'spoke', false, :at)",
        **p,
    )
    await _sql(
        db,
        "INSERT INTO prompts (id, activation_id, task, system, messages, extra, token_estimate, "
        "created_at) VALUES (:id, :act, 'respond', 's', '[]', '{}', 1, :at)",
        **p,
    )
    await _sql(
        db,
        "INSERT INTO drafts (id, agent, activation_id, text, created_at) "
        "VALUES (:id, :a, :act, 'draft', :at)",
        **p,
    )
    await _sql(
        db,
        "INSERT INTO speak_decisions (activation_id, agent, event_id, channel_key, speak, reason, "
        "basis, transmitted, objections, refined, decided_at) "
        "VALUES (:act, :a, :ev, 'terminal:tty', true, 'asked', 'rule', true, 0, false, :at)",
        **p,
    )
    await _sql(
        db,
        "INSERT INTO outbox (id, activation_id, agent, channel_key, text, unprompted, "
        "created_at, status, attempts) "
        "VALUES (:id, :act, :a, 'terminal:tty', 'hi', false, :at, :status, 0)",
        status=str(status),
        **p,
    )
    await _sql(
        db,
        "INSERT INTO telegram_inbound (event_id, agent, chat_id, message_id, received_at) "
        "VALUES (:ev, :a, 1, 2, :at)",
        **p,
    )
    await _sql(
        db,
        "INSERT INTO dial_intents (id, agent, person_id, number, status, call_id, created_at) "
        "VALUES (:id, :a, :ev, '+15550001', 'placed', :act, :at)",
        **p,
    )
    await _sql(
        db,
        "INSERT INTO guardrail_firings (id, agent, rule_id, summary, activation_id, fired_at) "
        "VALUES (:id, :a, 'r', 'fired', :act, :at)",
        **p,
    )
    return activation


async def test_rows_past_the_window_go_and_younger_or_unsettled_ones_stay(
    db: Database, new_agent: NewAgent
) -> None:
    agent = await new_agent()
    old = [await _turn(db, agent, OLD, s) for s in run_retention.SETTLED]
    await _turn(db, agent, OLD, DeliveryStatus.PENDING)
    await _turn(db, agent, OLD, DeliveryStatus.AWAITING_PICKUP)
    young = await _turn(db, agent, YOUNG, DeliveryStatus.DELIVERED)
    ancient = NOW - timedelta(days=25)
    await _turn(db, agent, ancient, DeliveryStatus.DELIVERED)

    result = await RetentionActivities(db, None, SETTINGS).purge(PurgeInput(agent=agent, now=NOW))

    # Five old turns (and the ancient one) lose their per-message rows; the young one keeps them.
    for table in ("activations", "speak_decisions", "drafts", "telegram_inbound", "dial_intents"):
        assert await _count(db, table, agent) == 1, table
        assert result.run_records[table] == 6, table
    assert result.run_records["prompts"] == 6
    # Outbox: only settled old rows go; the pending and awaiting-pickup ones wait for delivery.
    async with db.session() as session:
        kept = await execute(
            session, "SELECT status FROM outbox WHERE agent = :a ORDER BY status", {"a": agent}
        )
        assert [r.status for r in kept] == ["awaiting_pickup", "delivered", "pending"]
        prompts = await execute(
            session,
            "SELECT activation_id FROM prompts WHERE activation_id = ANY(CAST(:ids AS varchar[]))",
            {"ids": [*old, young]},
        )
        assert [r.activation_id for r in prompts] == [young]
    # Guardrail firings have their own, longer window: only the 25-day-old one went.
    assert result.run_records["guardrail_firings"] == 1
    assert await _count(db, "guardrail_firings", agent) == 6


async def test_prompts_and_drafts_outlive_a_short_window_by_a_day(
    db: Database, new_agent: NewAgent
) -> None:
    agent = await new_agent()
    await _turn(db, agent, NOW - timedelta(hours=6), DeliveryStatus.DELIVERED)
    short = MemorySettings(run_record_retention_days=0.1)

    result = await RetentionActivities(db, None, short).purge(PurgeInput(agent=agent, now=NOW))

    assert result.run_records.get("activations") == 1
    assert "drafts" not in result.run_records and "prompts" not in result.run_records
    assert await _count(db, "drafts", agent) == 1


async def test_usage_totals_are_identical_after_the_rollup(
    db: Database, new_agent: NewAgent
) -> None:
    agent = await new_agent()
    day = datetime(2026, 5, 1, tzinfo=UTC)
    for i in range(40):
        at = day + timedelta(days=i % 30, hours=i % 24, minutes=i)
        await add_usage(
            db.lane,
            usage=usage(
                agent=agent,
                occurred_at=at,
                stage=("respond", "critique", "embed")[i % 3],
                model=("m1", "m2")[i % 2],
                channel=(None, "terminal:tty", "web:x")[i % 3],
                input_tokens=100 + i,
                output_tokens=i,
                units=i % 4,
                # Binary fractions, so the sums are exact whatever order they are added in.
                cost_usd=None if i % 5 == 0 else i / 8,
            ),
        )
    everything = UsageQuery(since=day - timedelta(days=1), until=NOW, agent=agent)
    queries = [
        everything,
        *(everything.model_copy(update={"by": [d]}) for d in UsageDimension),
        everything.model_copy(update={"by": [UsageDimension.STAGE, UsageDimension.CHANNEL]}),
        everything.model_copy(update={"channel": "web:x"}),
        UsageQuery(since=day + timedelta(days=3), until=day + timedelta(days=9), agent=agent),
    ]
    async with db.session() as session:
        before = [await usage_report(session, query=q) for q in queries]

    result = await RetentionActivities(db, None, SETTINGS).purge(PurgeInput(agent=agent, now=NOW))

    assert result.run_records["usage_records"] == 40
    assert await _count(db, "usage_records", agent) == 0
    async with db.session() as session:
        after = [await usage_report(session, query=q) for q in queries]
    for query, was, now in zip(queries, before, after, strict=True):
        if query.by and set(query.by) & {UsageDimension.CONVERSATION, UsageDimension.ACTIVATION}:
            # The daily sums keep no conversation or activation: one group, same total.
            assert now.total == was.total and len(now.groups) == 1
            continue
        assert now == was, query
    assert before[0].total.records == 40 and before[0].total.unpriced == 8


async def test_usage_younger_than_the_window_or_its_day_stays_in_the_ledger(
    db: Database, new_agent: NewAgent
) -> None:
    agent = await new_agent()
    cutoff_day = (NOW - timedelta(days=10)).replace(hour=0)
    for at in (cutoff_day - timedelta(minutes=1), cutoff_day + timedelta(hours=1)):
        await add_usage(db.lane, usage=usage(agent=agent, occurred_at=at, cost_usd=0.5))

    result = await RetentionActivities(db, None, SETTINGS).purge(PurgeInput(agent=agent, now=NOW))

    # The record in the window's first (partial) day waits until that whole day is past.
    assert result.run_records["usage_records"] == 1
    assert await _count(db, "usage_records", agent) == 1
    assert await _count(db, "usage_daily", agent) == 1


async def test_a_spent_budget_leaves_the_rest_for_the_next_purge(
    db: Database, new_agent: NewAgent
) -> None:
    agent = await new_agent()
    await _turn(db, agent, OLD, DeliveryStatus.DELIVERED)
    cutoffs = run_cutoffs(SETTINGS, NOW)

    async with db.session() as session:
        spent = await run_retention.prune_run_records(
            session, agent=agent, cutoffs=cutoffs, budget_s=0
        )
    assert spent.rows == {} and await _count(db, "activations", agent) == 1

    async with db.session() as session:
        later = await run_retention.prune_run_records(session, agent=agent, cutoffs=cutoffs)
    assert later.rows["activations"] == 1 and await _count(db, "activations", agent) == 0
