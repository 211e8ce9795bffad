"""The counter and event-log meters, and the hub's isolation of a broken or stuck meter."""

from __future__ import annotations

import json
import socket
from pathlib import Path

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families
from temporalio.client import Client

from observability.metering.event_log import EventLogMeter
from observability.metering.factory import build_meters
from observability.metering.hub import MeterHub
from observability.metering.prometheus import LABELS, OTHER, PrometheusMeter
from schemas.models import UsageRecord
from store.db import Database
from tests.harness import Stack, running_worker, terminal
from tests.observability.fakes import HangingMeter, RaisingMeter, RecordingMeter
from tests.observability.records import usage


def samples(meter: PrometheusMeter, metric: str) -> dict[tuple[str, ...], float]:
    """Label values (in LABELS order, plus ``kind`` for tokens) -> value of ``metric``."""
    found: dict[tuple[str, ...], float] = {}
    for family in meter.registry.collect():
        for sample in family.samples:
            if sample.name == metric:
                keys = (*LABELS, "kind") if "kind" in sample.labels else LABELS
                found[tuple(sample.labels[k] for k in keys)] = sample.value
    return found


async def test_counters_total_calls_tokens_and_cost_by_low_cardinality_labels() -> None:
    meter = PrometheusMeter(port=None)
    await meter.record(usage(input_tokens=100, output_tokens=20, cost_usd=0.01))
    await meter.record(usage(input_tokens=50, output_tokens=5, cached_read_tokens=7, cost_usd=0.02))
    await meter.record(usage(stage="summarize", model="fast-1", tier="fast", channel="web:home"))
    await meter.record(
        usage(stage="image", model="img-1", units=3, input_tokens=0, output_tokens=0)
    )

    respond = ("respond", "scripted", "strong", "terminal", "ada")
    assert samples(meter, "persyn_usage_records_total")[respond] == 2
    tokens = samples(meter, "persyn_tokens_total")
    assert tokens[(*respond, "input")] == 150
    assert tokens[(*respond, "output")] == 25
    assert tokens[(*respond, "cached_read")] == 7
    assert samples(meter, "persyn_cost_usd_total")[respond] == pytest.approx(0.03)
    unpriced = samples(meter, "persyn_unpriced_records_total")
    assert unpriced[("summarize", "fast-1", "fast", "web", "ada")] == 1
    assert (
        samples(meter, "persyn_units_total")[("image", "img-1", "strong", "terminal", "ada")] == 3
    )


async def test_counters_are_scraped_over_http() -> None:
    meter = PrometheusMeter(host="127.0.0.1", port=0)
    try:
        assert meter.port is not None
        await meter.record(usage(agent="bea", cost_usd=0.5))
        async with httpx.AsyncClient() as client:
            reply = await client.get(f"http://127.0.0.1:{meter.port}/metrics")
        families = {f.name: f for f in text_string_to_metric_families(reply.text)}
        cost = families["persyn_cost_usd"].samples
        assert [(s.labels["agent"], s.value) for s in cost if s.name.endswith("_total")] == [
            ("bea", 0.5)
        ]
    finally:
        await meter.aclose()


async def test_a_taken_port_leaves_the_counters_counting() -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        meter = PrometheusMeter(host="127.0.0.1", port=taken.getsockname()[1])
        assert meter.port is None
        await meter.record(usage())
        assert sum(samples(meter, "persyn_usage_records_total").values()) == 1
        await meter.aclose()


async def test_label_sets_stay_bounded_whatever_the_traffic() -> None:
    meter = PrometheusMeter(port=None)
    conversations = set()
    for i in range(3000):
        record = usage(
            channel=f"terminal:room-{i}",  # a new channel each time: only its kind is a label
            model=f"model-{i % 500}",  # more models than the cap
            agent=f"agent-{i % 3}",
        )
        conversations.add(record.conversation)
        await meter.record(record)
    series = samples(meter, "persyn_usage_records_total")
    assert sum(series.values()) == 3000
    models = {key[1] for key in series}
    assert len(models) == 64 + 1 and OTHER in models
    assert {key[3] for key in series} == {"terminal"}
    assert len(series) <= 65 * 3
    exposed = {value for key in series for value in key}
    assert not exposed & conversations


async def test_the_event_log_writes_one_json_record_per_line(tmp_path: Path) -> None:
    path = tmp_path / "usage" / "usage.jsonl"
    meter = EventLogMeter(path)
    first, second = usage(cost_usd=0.25), usage(cost_usd=None, units=2)
    for record in (first, second, first):  # the repeat is a redelivery
        await meter.record(record)
    await meter.aclose()
    lines = path.read_text(encoding="utf-8").splitlines()
    assert [UsageRecord.model_validate(json.loads(line)) for line in lines] == [first, second]


async def test_the_event_log_can_be_stdout(capsys: pytest.CaptureFixture[str]) -> None:
    meter = EventLogMeter(Path("-"))
    record = usage()
    await meter.record(record)
    await meter.aclose()
    assert UsageRecord.model_validate_json(capsys.readouterr().out) == record


async def test_a_duplicate_delivery_is_counted_once_by_the_counters() -> None:
    meter = PrometheusMeter(port=None)
    record = usage(cost_usd=0.1)
    await meter.record(record)
    await meter.record(record)
    assert sum(samples(meter, "persyn_usage_records_total").values()) == 1
    assert sum(samples(meter, "persyn_cost_usd_total").values()) == pytest.approx(0.1)


async def test_a_raising_or_hanging_meter_costs_only_its_own_records() -> None:
    raising, hanging, recorder = RaisingMeter(), HangingMeter(), RecordingMeter()
    hub = MeterHub([raising, hanging, recorder], timeout=30)
    records = [usage() for _ in range(3)]
    for record in records:
        hub.emit(record)  # never waits, never raises
    await recorder.wait_for(3)
    await hanging.entered.wait()
    assert recorder.records == records  # while the hanging meter is still stuck on its first
    assert hub.stats()["hanging"]["delivered"] == 0
    hanging.release.set()
    await hub.flush(timeout=10)
    assert hub.stats()["raising"] == {"delivered": 0, "failed": 3, "dropped": 0, "queued": 0}
    assert hub.stats()["hanging"]["delivered"] == 3
    await hub.aclose(timeout=1)


async def test_the_set_of_meters_is_configuration(stack: Stack, tmp_path: Path) -> None:
    settings = stack.settings(
        meters=["event-log", "prometheus", "ledger", "event-log"],
        metrics_port=0,
        event_log_path=tmp_path / "u.jsonl",
    )
    db = Database(stack.dsn)
    meters = build_meters(settings, db)
    assert [m.name for m in meters] == ["event-log", "prometheus", "ledger"]
    assert build_meters(stack.settings(meters=[]), db) == []
    prometheus = meters[1]
    assert isinstance(prometheus, PrometheusMeter) and prometheus.port is not None
    for meter in meters:
        await meter.aclose()
    await db.aclose()


async def test_label_sets_stay_bounded_after_many_conversations(
    client: Client, stack: Stack
) -> None:
    counters, recorder = PrometheusMeter(port=None), RecordingMeter()
    conversations = 12
    async with running_worker(client, stack, meters=[counters, recorder]) as harness:
        agent = (await harness.create_agent()).handle
        for i in range(conversations):
            # Each on its own channel with its own speaker: a new conversation every time.
            await harness.say(
                agent, f"hello number {i}", speaker=f"p{i}", channel=terminal(f"r{i}")
            )
        await recorder.wait_for(conversations, where=lambda r: r.stage == "respond")

    assert len({r.conversation for r in recorder.records}) == conversations
    stages = {r.stage for r in recorder.records}
    series = samples(counters, "persyn_usage_records_total")
    # One label set per stage, however many conversations, channels and speakers there were.
    assert len(series) == len(stages)
    assert series[("respond", "scripted", "strong", "terminal", agent)] == conversations
    assert {(key[3], key[4]) for key in series} == {("terminal", agent)}
    token_series = samples(counters, "persyn_tokens_total")
    assert len(token_series) == 2 * len(stages)  # input and output per stage
