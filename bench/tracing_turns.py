"""What keeping tracing on costs a whole turn: two real workers, tracing off and on, interleaved.

The per-call figures of ``bench.metering_overhead`` cover the model-call span. A turn also gets
its root span and one span per activity from Temporal's tracing interceptor, and the worker
exports them all. Here two ``python -m workers.main`` processes serve one private stack: one
with tracing off, one with the embedded stack's default (the file exporter, ``metadata``
content). Blocks of messages alternate between them so drift on a shared machine hits both
alike. Figures: submit-to-receipt latency per turn, and worker CPU seconds per turn.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import psutil

from bench.harness import BenchStack, bench_stack, new_agent, percentile, worker_process
from bench.plain_pipeline import make_event
from schemas.events import Outcome
from store.db import Database
from temporal import inbox

BLOCK = 10


@dataclass
class Side:
    """One worker and what its turns measured."""

    name: str
    queue: str
    env: dict[str, str]
    handle: str = ""
    latencies_ms: list[float] = field(default_factory=list)
    cpu_s: float = 0.0


async def _block(stack: BenchStack, side: Side, process: psutil.Process, n: int) -> None:
    cpu_before = sum(process.cpu_times()[:2])
    for i in range(n):
        started = time.perf_counter()
        receipt = await inbox.submit(
            stack.client,
            handle=side.handle,
            event=make_event(f"message {i}"),
            task_queue=side.queue,
        )
        side.latencies_ms.append((time.perf_counter() - started) * 1000)
        assert receipt.marker is not None and receipt.marker.outcome is Outcome.SPOKE
    side.cpu_s += sum(process.cpu_times()[:2]) - cpu_before


async def measure(turns: int) -> str:
    """A markdown table: tracing off versus on, ``turns`` turns each."""
    sides = [
        Side("tracing off", "bench-trace-off", {"PERSYN_TRACING_EXPORTERS": ""}),
        Side(
            "tracing on (file, metadata)",
            "bench-trace-on",
            {"PERSYN_TRACING_EXPORTERS": "file", "PERSYN_TRACING_CONTENT": "metadata"},
        ),
    ]
    async with bench_stack() as stack:
        db = Database(stack.dsn)
        try:
            for side in sides:
                side.handle = await new_agent(db, "trace")
        finally:
            await db.aclose()
        async with (
            worker_process(stack, sides[0].queue, sides[0].env) as off,
            worker_process(stack, sides[1].queue, sides[1].env) as on,
        ):
            processes = [psutil.Process(off.pid), psutil.Process(on.pid)]
            for side, process in zip(sides, processes, strict=True):  # warm-up
                await _block(stack, side, process, BLOCK)
                side.latencies_ms.clear()
                side.cpu_s = 0.0
            for _ in range(max(1, turns // BLOCK)):
                for side, process in zip(sides, processes, strict=True):
                    await _block(stack, side, process, BLOCK)
        # The workers have stopped and flushed: the traced one's spans are all on disk.
        spans = stack.home / "traces" / "spans.jsonl"
        written = spans.stat().st_size if spans.exists() else 0
    if not written:
        raise RuntimeError("the traced worker wrote no spans: the comparison would be void")
    measured = len(sides[1].latencies_ms) + BLOCK
    return _table(sides) + f"\n\nSpan file: {written / measured / 1024:.1f} kB per traced turn."


def _table(sides: list[Side]) -> str:
    base = sides[0]
    base_p50 = percentile(base.latencies_ms, 0.5)
    base_cpu = base.cpu_s / len(base.latencies_ms) * 1000
    rows = [
        "| worker | turns | p50 ms | p95 ms | p50 overhead ms | worker CPU ms/turn "
        "| CPU overhead ms/turn |",
        "|---|---|---|---|---|---|---|",
    ]
    for side in sides:
        p50 = percentile(side.latencies_ms, 0.5)
        cpu = side.cpu_s / len(side.latencies_ms) * 1000
        rows.append(
            f"| {side.name} | {len(side.latencies_ms)} | {p50:.1f} "
            f"| {percentile(side.latencies_ms, 0.95):.1f} | {p50 - base_p50:+.1f} "
            f"| {cpu:.1f} | {cpu - base_cpu:+.1f} |"
        )
    return "\n".join(rows)
