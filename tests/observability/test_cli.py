"""``persyn usage`` and ``persyn trace`` as an operator runs them."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
import typer
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from typer.testing import CliRunner

from cli.trace import trace
from cli.usage import usage
from contract import attribution
from observability.model_call import ModelCallSpan
from observability.span_file import SpanFileExporter
from observability.tracing import Tracing, tool_span
from schemas.events import CompletionMarker, Outcome
from schemas.ids import new_ulid
from schemas.models import (
    Attribution,
    ChatMessage,
    ModelBinding,
    ModelRequest,
    ModelResponse,
    ProviderName,
    TaskType,
    TokenUsage,
    UsageRecord,
)
from schemas.settings import get_settings
from schemas.usage import UsageReport
from store.db import Database
from store.queries.ledger import add_usage
from store.queries.runtime import record_outcome
from tests.harness import Stack, unique
from tests.observability.records import usage as record

runner = CliRunner()


def app() -> typer.Typer:
    """The commands mounted as ``persyn`` mounts them."""
    persyn = typer.Typer()
    persyn.command()(usage)
    persyn.command()(trace)
    return persyn


@pytest.fixture
def settings_env(stack: Stack, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setenv("PERSYN_HOME", str(stack.home))
    monkeypatch.setenv("PERSYN_DATABASE_URL", stack.dsn)
    get_settings.cache_clear()
    yield
    get_settings.cache_clear()


def store(records: list[UsageRecord], dsn: str) -> None:
    async def insert() -> None:
        db = Database(dsn)
        for item in records:
            await add_usage(db.lane, usage=item)
        await db.aclose()

    asyncio.run(insert())


def test_usage_reports_exact_totals_by_stage(stack: Stack, settings_env: None) -> None:
    agent = unique("cli")[:32]
    old = datetime.now(UTC) - timedelta(days=3)
    records = [
        record(agent=agent, stage="respond", cost_usd=0.5, input_tokens=1000),
        record(agent=agent, stage="respond", cost_usd=0.25, input_tokens=500),
        record(agent=agent, stage="critique", cost_usd=None, input_tokens=10),
        record(agent=agent, stage="respond", cost_usd=9.0, occurred_at=old),  # out of range
    ]
    store(records, stack.dsn)

    shown = runner.invoke(app(), ["usage", "--agent", agent, "--by", "stage"])
    assert shown.exit_code == 0, shown.output
    lines = shown.output.splitlines()
    assert lines[0].startswith("usage from") and lines[0].endswith("by stage")
    assert any(line.startswith("respond") and "0.750000" in line for line in lines)
    assert any(line.startswith("critique") and "(+1 unpriced)" in line for line in lines)
    assert lines[-1].startswith("total") and "0.750000 (+1 unpriced)" in lines[-1]

    as_json = runner.invoke(
        app(), ["usage", "--agent", agent, "--by", "stage", "--by", "model", "--json"]
    )
    report = UsageReport.model_validate_json(as_json.output)
    assert report.total.records == 3 and report.total.cost_usd == 0.75
    assert report.total.input_tokens == 1510 and report.total.unpriced == 1

    week = runner.invoke(app(), ["usage", "--agent", agent, "--since", "7d", "--json"])
    assert UsageReport.model_validate_json(week.output).total.cost_usd == 9.75


def test_the_local_models_usage_is_free_not_unpriced(stack: Stack, settings_env: None) -> None:
    only_local, mixed = unique("loc")[:32], unique("mix")[:32]
    local = {"provider": "local", "model": "smollm2", "cost_usd": None}
    store(
        [
            record(agent=only_local, **local),
            record(agent=only_local, stage="emotion", **local),
            record(agent=mixed, **local),
            record(agent=mixed, stage="critique", cost_usd=None),
            record(agent=mixed, cost_usd=0.5),
        ],
        stack.dsn,
    )

    free = runner.invoke(app(), ["usage", "--agent", only_local])
    both = runner.invoke(app(), ["usage", "--agent", mixed, "--json"])

    assert free.output.splitlines()[-1].endswith("free (local model)"), free.output
    report = UsageReport.model_validate_json(both.output)
    assert (report.total.records, report.total.local, report.total.unpriced) == (3, 1, 1)
    shown = runner.invoke(app(), ["usage", "--agent", mixed]).output.splitlines()[-1]
    assert shown.endswith("0.500000 (+1 unpriced) (+1 local, free)"), shown


def test_usage_refuses_an_unreadable_time(settings_env: None) -> None:
    result = runner.invoke(app(), ["usage", "--since", "last tuesday"])
    assert result.exit_code == 1
    assert result.output.count("\n") == 1 and "24h or 7d" in result.output


def write_turn(path: Path, activation: str) -> None:
    """A turn with one model call and one tool call, through the real span code and exporter."""
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(SpanFileExporter(path)))
    traced = Tracing(provider=provider, content="full")
    started = time.time_ns()
    token = attribution.use(Attribution(agent="ada", activation=activation))
    try:
        request = ModelRequest(
            task=TaskType.RESPOND,
            system="You are Ada.",
            messages=[ChatMessage(role="user", content="what is the tide doing")],
        )
        binding = ModelBinding(provider=ProviderName.SCRIPTED, model="scripted", context_window=8)
        with ModelCallSpan(traced, request, binding) as span:
            span.finish(
                ModelResponse(
                    text="Ebbing.",
                    model="scripted",
                    provider=ProviderName.SCRIPTED,
                    usage=TokenUsage(input_tokens=12, output_tokens=3),
                ),
                latency_ms=1.0,
            )
        with tool_span("tide_table", {"port": "Brest"}, tracing=traced) as call:
            call.set_result("low water at 14:02")
    finally:
        attribution.reset(token)
    root = traced.turn_span(
        activation,
        "turn:message",
        start_ns=started,
        attributes={
            "persyn.agent": "ada",
            "persyn.outcome": "spoke",
            "persyn.input.text": "what is the tide doing",
        },
    )
    root.end()
    provider.shutdown()


def test_trace_prints_the_tree_with_timings(tmp_path: Path, settings_env: None) -> None:
    spans = tmp_path / "spans.jsonl"
    activation = new_ulid()
    write_turn(spans, activation)
    write_turn(spans, new_ulid())  # another turn in the same file

    shown = runner.invoke(app(), ["trace", f"activation/{activation}", "--file", str(spans)])
    assert shown.exit_code == 0, shown.output
    lines = shown.output.splitlines()
    assert lines[0].startswith(f"activation {activation}")
    assert "turn:message" in lines[1] and "outcome=spoke" in lines[1] and " ms " in lines[1]
    assert 'input: "what is the tide doing"' in lines[2]
    assert "├─ model:respond" in lines[3] and "in=12" in lines[3] and "out=3" in lines[3]
    assert "└─ tool:tide_table" in lines[4] and "result chars=18" in lines[4]
    assert len(lines) == 5

    # A directory, as a collector's rotating file exporter leaves it, reads the same.
    from_dir = runner.invoke(app(), ["trace", activation, "--file", str(tmp_path)])
    assert from_dir.output == shown.output

    as_json = runner.invoke(app(), ["trace", activation, "--file", str(spans), "--json"])
    assert [node["span"]["name"] for node in json.loads(as_json.output)] == [
        "turn:message",
        "model:respond",
        "tool:tide_table",
    ]


def test_trace_says_what_to_do_when_nothing_was_recorded(
    tmp_path: Path, settings_env: None
) -> None:
    result = runner.invoke(app(), ["trace", new_ulid(), "--file", str(tmp_path / "none.jsonl")])
    assert result.exit_code == 1 and "PERSYN_TRACING_EXPORTERS=file" in result.output
    bad = runner.invoke(app(), ["trace", "not-an-id"])
    assert bad.exit_code == 1 and "is not a ULID" in bad.output


def test_trace_takes_the_event_id_that_send_prints(
    tmp_path: Path, stack: Stack, settings_env: None
) -> None:
    spans = tmp_path / "spans.jsonl"
    event, activation = new_ulid(), new_ulid()
    write_turn(spans, activation)
    now = datetime.now(UTC)
    marker = CompletionMarker(
        event_id=event,
        activation_id=activation,
        outcome=Outcome.SPOKE,
        completed_at=now,
        expires_at=now + timedelta(days=1),
    )

    async def handled() -> None:
        db = Database(stack.dsn)
        async with db.session() as session:
            await record_outcome(session, agent="ada", trigger="message", marker=marker)
        await db.aclose()

    asyncio.run(handled())

    shown = runner.invoke(app(), ["trace", event, "--file", str(spans)])

    assert shown.exit_code == 0, shown.output
    lines = shown.output.splitlines()
    assert lines[0] == f"event {event} was handled by activation {activation}"
    assert lines[1].startswith(f"activation {activation}")
