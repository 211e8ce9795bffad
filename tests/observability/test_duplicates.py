"""A record delivered twice (a retried hand-off, a re-shipped batch) is counted once."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

from observability.metering.event_log import EventLogMeter
from observability.metering.hub import MeterHub
from observability.metering.ledger import LedgerMeter
from observability.metering.prometheus import PrometheusMeter
from schemas.usage import UsageQuery
from store.db import Database
from store.queries.ledger import add_usage
from store.queries.usage_report import usage_report
from tests.harness import Stack, unique
from tests.observability.records import usage


async def test_duplicate_delivery_is_counted_once(stack: Stack, tmp_path: Path) -> None:
    db = Database(stack.dsn)
    agent = unique("dup")[:32]
    record = usage(agent=agent, cost_usd=0.125, input_tokens=1000, output_tokens=100)
    counters = PrometheusMeter(port=None)
    event_log = tmp_path / "usage.jsonl"
    hub = MeterHub([LedgerMeter(db), counters, EventLogMeter(event_log)])
    hub.emit(record)
    hub.emit(record)
    await hub.aclose()
    # Re-shipped later by another process: the ledger still counts it once.
    again = MeterHub([LedgerMeter(db)])
    again.emit(record)
    await again.aclose()
    async with db.session() as session:
        assert await add_usage(db.lane, usage=record) is False
        query = UsageQuery(
            since=record.occurred_at - timedelta(minutes=1),
            until=record.occurred_at + timedelta(minutes=1),
            agent=agent,
        )
        report = await usage_report(session, query=query)
    await db.aclose()

    assert report.total.records == 1
    assert report.total.cost_usd == 0.125
    assert report.total.input_tokens == 1000
    assert len(event_log.read_text(encoding="utf-8").splitlines()) == 1
    records = [
        sample.value
        for family in counters.registry.collect()
        for sample in family.samples
        if sample.name == "persyn_usage_records_total"
    ]
    assert records == [1.0]
