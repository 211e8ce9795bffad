"""Counters, event log and ledger agree with the records a scripted conversation emits, and a
conversation's exact cost is the sum of its records, background work included."""

from __future__ import annotations

import json
import math
from collections.abc import Iterable
from datetime import UTC, datetime, timedelta
from pathlib import Path

from temporalio.client import Client

from contract import attribution
from observability.metering.event_log import EventLogMeter
from observability.metering.hub import UsageMeter
from observability.metering.ledger import LedgerMeter
from observability.metering.pricing import load_price_table
from observability.metering.producer import emit_work, work_record
from observability.metering.prometheus import PrometheusMeter
from schemas.models import Attribution, UsageRecord
from schemas.usage import UsageDimension, UsageQuery, UsageReport
from store.db import Database
from store.queries.usage_report import usage_report
from tests.harness import Stack, running_worker, terminal
from tests.observability.background import run_background
from tests.observability.fakes import RecordingMeter

PRICES = """
[models.scripted]
input = 3.0
output = 15.0

[units."img-1"]
default = 0.04
"""


def cost_of(records: Iterable[UsageRecord]) -> float:
    return math.fsum(r.cost_usd or 0.0 for r in records)


def counter_total(meter: PrometheusMeter, metric: str, agent: str) -> float:
    return math.fsum(
        sample.value
        for family in meter.registry.collect()
        for sample in family.samples
        if sample.name == metric and sample.labels["agent"] == agent
    )


async def report(db: Database, **filters: object) -> UsageReport:
    now = datetime.now(UTC)
    query = UsageQuery.model_validate(
        {"since": now - timedelta(hours=1), "until": now + timedelta(minutes=1), **filters}
    )
    async with db.session() as session:
        return await usage_report(session, query=query)


async def test_every_surface_agrees_and_a_conversation_costs_the_sum_of_its_records(
    client: Client, stack: Stack, tmp_path: Path
) -> None:
    price_file = tmp_path / "prices.toml"
    price_file.write_text(PRICES, encoding="utf-8")
    event_log = tmp_path / "usage.jsonl"
    ledger_db = Database(stack.dsn)
    counters, recorder = PrometheusMeter(port=None), RecordingMeter()
    meters: list[UsageMeter] = [
        LedgerMeter(ledger_db),
        counters,
        EventLogMeter(event_log),
        recorder,
    ]
    async with running_worker(
        client, stack, meters=meters, settings_overrides={"price_table_path": price_file}
    ) as harness:
        agent = (await harness.create_agent()).handle
        receipts = [
            await harness.say(agent, text)
            for text in ("good morning", "what did we plan for today", "thanks, that helps")
        ]
        elsewhere = await harness.say(agent, "a word on another channel", channel=terminal("ops"))
        markers = [r.marker for r in receipts]
        assert all(m is not None and m.activation_id for m in markers)
        conversation = markers[0].conversation_id if markers[0] else None
        assert conversation and all(m and m.conversation_id == conversation for m in markers)
        last = markers[-1]
        assert last is not None
        turn = Attribution(
            agent=agent,
            channel="terminal:tty",
            conversation=conversation,
            activation=last.activation_id,
        )

        # Background work of the last turn: a model call in a workflow that inherits the
        # turn's attribution, and billable work outside the gateway priced per image.
        await run_background(harness, turn)
        token = attribution.use(turn)
        try:
            image = work_record(
                stage="image",
                provider="images",
                model="img-1",
                units=2,
                prices=load_price_table(price_file),
            )
        finally:
            attribution.reset(token)
        emit_work(harness.deps.meters, image)

        await recorder.wait_for(6)
        await harness.deps.meters.flush(timeout=10)
        assert harness.deps.meters.stats()["ledger"]["failed"] == 0

    records = recorder.records
    stage_names = [r.stage for r in records]
    # One reply per turn; the pipeline may add stages (critique, ...), so no exact list.
    assert stage_names.count("respond") == 4 and {"summarize", "image"} <= set(stage_names)
    for record in records:
        if record.stage != "image":
            expected = (record.input_tokens * 3.0 + record.output_tokens * 15.0) / 1e6
            assert record.cost_usd is not None and math.isclose(record.cost_usd, expected)
    assert image.cost_usd is not None and math.isclose(image.cost_usd, 0.08)

    # The ledger holds exactly the emitted records, and its exact totals are their sums.
    by_agent = await report(ledger_db, agent=agent, by=[UsageDimension.CONVERSATION])
    assert by_agent.total.records == len(records)
    assert math.isclose(by_agent.total.cost_usd, cost_of(records), rel_tol=1e-12)
    assert by_agent.total.input_tokens == sum(r.input_tokens for r in records)
    assert by_agent.total.units == 2 and by_agent.total.unpriced == 0

    ours = [r for r in records if r.conversation == conversation]
    one = await report(ledger_db, conversation=conversation, by=[UsageDimension.STAGE])
    assert one.total.records == len(ours)
    assert math.isclose(one.total.cost_usd, cost_of(ours), rel_tol=1e-12)
    stages = {group.key[UsageDimension.STAGE]: group.totals for group in one.groups}
    assert {"respond", "summarize", "image"} <= set(stages)  # background work included
    assert stages["respond"].records == 3
    assert math.isclose(stages["image"].cost_usd, 0.08)
    other = elsewhere.marker.conversation_id if elsewhere.marker else None
    assert other != conversation
    assert {g.key[UsageDimension.CONVERSATION] for g in by_agent.groups} == {conversation, other}

    # The event log carries the same records, each once, with the same cost.
    logged = [
        UsageRecord.model_validate(json.loads(line)) for line in event_log.read_text().splitlines()
    ]
    assert sorted(r.record_id for r in logged) == sorted(r.record_id for r in records)
    assert math.isclose(cost_of(logged), cost_of(records), rel_tol=1e-12)

    # The counters add up to the same totals.
    assert counter_total(counters, "persyn_usage_records_total", agent) == len(records)
    assert math.isclose(
        counter_total(counters, "persyn_cost_usd_total", agent), cost_of(records), rel_tol=1e-9
    )
    assert counter_total(counters, "persyn_units_total", agent) == 2
    await ledger_db.aclose()
