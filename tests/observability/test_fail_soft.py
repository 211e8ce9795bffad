"""A broken, stuck or absent meter or tracer never fails a turn (behaviour, not timings:
the latency side is measured in bench/metering_overhead.py)."""

from __future__ import annotations

import socket
from pathlib import Path

from opentelemetry.context import Context
from opentelemetry.sdk.trace import ReadableSpan, Span, SpanProcessor
from temporalio.client import Client

from schemas.events import Outcome
from tests.harness import Harness, Stack, running_worker
from tests.observability.fakes import HangingMeter, RaisingMeter, RecordingMeter
from tests.observability.helpers import finished, traced_worker


async def spoke(harness: Harness, handle: str, text: str) -> str:
    receipt = await harness.say(handle, text)
    assert receipt.marker is not None
    assert receipt.marker.outcome is Outcome.SPOKE
    assert receipt.marker.text == text and not receipt.marker.degraded
    assert receipt.marker.activation_id is not None
    return receipt.marker.activation_id


async def test_a_raising_and_a_hanging_meter_do_not_fail_the_turn(
    client: Client, stack: Stack
) -> None:
    raising, hanging, recorder = RaisingMeter(), HangingMeter(), RecordingMeter()
    async with running_worker(client, stack, meters=[raising, hanging, recorder]) as harness:
        agent = await harness.create_agent()
        first = await spoke(harness, agent.handle, "are you there")
        second = await spoke(harness, agent.handle, "still there")
        await recorder.wait_for(2, where=lambda r: r.stage == "respond")
        replies = [r.activation for r in recorder.records if r.stage == "respond"]
        assert replies == [first, second]
        await hanging.entered.wait()  # stuck on the first record all along
        assert raising.calls >= 1
        assert harness.deps.meters.stats()["hanging"]["delivered"] == 0
        hanging.release.set()


class Exploding(SpanProcessor):
    """A span processor with a bug: every span start and end raises."""

    def on_start(self, span: Span, parent_context: Context | None = None) -> None:
        raise RuntimeError("span processor bug on start")

    def on_end(self, span: ReadableSpan) -> None:
        raise RuntimeError("span processor bug on end")


async def test_a_broken_tracer_does_not_fail_the_turn_or_the_meters(
    stack: Stack, tmp_path: Path
) -> None:
    recorder = RecordingMeter()
    async with traced_worker(stack, tmp_path / "spans.jsonl", meters=[recorder]) as (
        harness,
        traced,
    ):
        traced.provider.add_span_processor(Exploding())
        agent = await harness.create_agent()
        activation = await spoke(harness, agent.handle, "trace me if you can")
        await finished(harness.client, activation)
        await spoke(harness, agent.handle, "and again")
        await recorder.wait_for(2, where=lambda r: r.stage == "respond")
        assert recorder.records[0].activation == activation


async def test_an_absent_collector_does_not_fail_the_turn(stack: Stack, tmp_path: Path) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        closed_port = probe.getsockname()[1]  # nothing listens here once the probe closes
    recorder = RecordingMeter()
    async with traced_worker(
        stack,
        tmp_path / "spans.jsonl",
        meters=[recorder],
        tracing_exporters=["otlp"],
        tracing_endpoint=f"http://127.0.0.1:{closed_port}/v1/traces",
    ) as (harness, traced):
        agent = await harness.create_agent()
        activation = await spoke(harness, agent.handle, "anyone collecting")
        await finished(harness.client, activation)
        await recorder.wait_for(1)
        traced.close(timeout_s=2)  # the export fails in the background; closing is bounded
