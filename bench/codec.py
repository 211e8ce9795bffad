"""What the payload codec costs an activation: two real workers, codec off and on, interleaved.

Two ``python -m workers.main`` processes serve one private stack: one with the codec off, one
with it on (each with a client of its own kind, so submitted events and receipts are sealed
only on the codec side). Blocks of messages alternate between them so drift on a shared
machine hits both alike. Figures: submit-to-receipt latency per message and worker CPU per
message. Beside them, in process: how many sealed payloads one message leaves in history, and
what sealing and opening one payload costs, which bounds the codec's share from below.

Run: ``python -m bench.codec [messages]``.
"""

from __future__ import annotations

import asyncio
import base64
import sys
import time
from dataclasses import dataclass, field

import psutil
from temporalio.api.common.v1 import Payload
from temporalio.client import Client
from temporalio.converter import WorkflowSerializationContext

from bench.harness import BenchStack, bench_stack, new_agent, percentile, record, worker_process
from bench.plain_pipeline import make_event
from contract import names
from schemas.events import Outcome
from store.db import Database
from temporal import inbox
from temporal.client import connect, keyring
from temporal.codec import ENCODING, AgentPayloadCodec

BLOCK = 10
SEALED = base64.b64encode(ENCODING).decode()


@dataclass
class Side:
    """One worker, the client that talks to it, and what its messages measured."""

    name: str
    queue: str
    codec: bool
    client: Client | None = None
    handle: str = ""
    latencies_ms: list[float] = field(default_factory=list)
    cpu_s: float = 0.0


async def _block(side: Side, process: psutil.Process, n: int) -> None:
    assert side.client is not None
    cpu_before = sum(process.cpu_times()[:2])
    for i in range(n):
        started = time.perf_counter()
        receipt = await inbox.submit(
            side.client, handle=side.handle, event=make_event(f"message {i}"), task_queue=side.queue
        )
        side.latencies_ms.append((time.perf_counter() - started) * 1000)
        marker = receipt.marker
        assert marker is not None and marker.outcome is Outcome.SPOKE, (side.name, marker)
    side.cpu_s += sum(process.cpu_times()[:2]) - cpu_before


async def sealed_per_message(stack: BenchStack, side: Side, db: Database) -> int:
    """Sealed payloads one message leaves in the histories of its three workflows."""
    assert side.client is not None
    handle = await new_agent(db, "codec-count")
    receipt = await inbox.submit(
        side.client, handle=handle, event=make_event("count me"), task_queue=side.queue
    )
    marker = receipt.marker
    assert marker is not None and marker.conversation_id and marker.activation_id
    activation = side.client.get_workflow_handle(names.activation_workflow_id(marker.activation_id))
    await activation.result()
    count = 0
    for workflow_id in (
        names.agent_workflow_id(handle),
        names.conversation_workflow_id(marker.conversation_id),
        activation.id,
    ):
        history = await side.client.get_workflow_handle(workflow_id).fetch_history()
        count += history.to_json().count(SEALED)
    return count


async def per_payload_us(stack: BenchStack, db: Database, size: int, n: int = 2000) -> float:
    """Microseconds to seal and open one payload of ``size`` bytes (keys cached)."""
    codec = AgentPayloadCodec(keyring(stack.settings())).with_context(
        WorkflowSerializationContext(
            namespace="default", workflow_id="agent/" + await new_agent(db)
        )
    )
    payload = Payload(metadata={"encoding": b"json/plain"}, data=b'"' + b"x" * (size - 2) + b'"')
    await codec.decode(await codec.encode([payload]))  # the key, fetched once
    started = time.perf_counter()
    for _ in range(n):
        await codec.decode(await codec.encode([payload]))
    return (time.perf_counter() - started) / n * 1e6


async def measure(messages: int) -> str:
    """A markdown report: codec off versus on, ``messages`` messages each."""
    sides = [Side("codec off", "bench-codec-off", False), Side("codec on", "bench-codec-on", True)]
    async with bench_stack() as stack:
        db = Database(stack.dsn)
        try:
            for side in sides:
                side.handle = await new_agent(db, "codec")
                side.client = await connect(stack.settings(), codec=side.codec)
            async with (
                worker_process(stack, sides[0].queue, {"PERSYN_CODEC_ENABLED": "false"}) as off,
                worker_process(stack, sides[1].queue, {"PERSYN_CODEC_ENABLED": "true"}) as on,
            ):
                processes = [psutil.Process(off.pid), psutil.Process(on.pid)]
                for side, process in zip(sides, processes, strict=True):  # warm-up
                    await _block(side, process, BLOCK)
                    side.latencies_ms.clear()
                    side.cpu_s = 0.0
                for _ in range(max(1, messages // BLOCK)):
                    for side, process in zip(sides, processes, strict=True):
                        await _block(side, process, BLOCK)
                sealed = await sealed_per_message(stack, sides[1], db)
            micro = {size: await per_payload_us(stack, db, size) for size in (256, 4096)}
        finally:
            await db.aclose()
    return _report(sides, sealed, micro)


def _report(sides: list[Side], sealed: int, micro: dict[int, float]) -> str:
    base = sides[0]
    base_p50 = percentile(base.latencies_ms, 0.5)
    base_cpu = base.cpu_s / len(base.latencies_ms) * 1000
    rows = [
        "| worker | messages | p50 ms | p95 ms | p50 added ms | worker CPU ms/message "
        "| CPU added ms/message |",
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
    floor = sealed * micro[256] / 1000
    rows += [
        "",
        f"One message leaves {sealed} sealed payloads in its three workflows' histories. "
        f"Sealing and opening one payload (keys cached) takes {micro[256]:.0f} µs at 256 bytes "
        f"and {micro[4096]:.0f} µs at 4 KB, so the codec's own work per message is about "
        f"{floor:.1f} ms at 256 bytes if every payload is sealed once and opened once (the "
        "worker opens a payload again whenever it replays a history it no longer caches).",
    ]
    return "\n".join(rows)


def main() -> None:
    messages = int(sys.argv[1]) if len(sys.argv) > 1 else 100
    body = asyncio.run(measure(messages))
    record("Payload codec: cost per activation (bench/codec.py)", body)


if __name__ == "__main__":
    main()
