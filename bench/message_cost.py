"""The cost of one message, split around the model call, for several worker trees in one run.

On one private embedded stack (tuned dev server, SQLite WAL) with a zero-latency scripted model,
each *variant* is a real worker process started from a source tree (the current checkout, or a
``git worktree`` of an earlier commit), with the determinism sandbox on unless it says not:

* pre-model latency: from sending the ``submit`` update to the model request leaving the
  gateway (the ``respond`` usage record's ``occurred_at`` minus its ``latency_ms``);
* post-model latency: from the model's last token (the record's ``occurred_at``) to the
  receipt, which carries the transmitted reply, reaching the client;
* worker and Temporal-server CPU per message (process counters over the sequential messages);
* throughput of 20 agents x 10 messages at once;
* in the same run, the one-activity floor and the no-op three-workflow shape (in-process
  worker, sandboxed), for the targets that are stated against them, and the no-op shape of the
  agent starting the activation itself: latency and throughput with no work in any step;
* where the pre-model time goes: the server's hops and each workflow's task on the path, read
  from the histories (``bench/premodel_path.py``).

Variants run in turns (A, B, ..., A, B, ...) so drift on a shared machine spreads over all.

Usage: ``python -m bench.message_cost --variant before=/path/to/tree --variant after=.``
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import time
import uuid
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

import psutil
from sqlalchemy import text

from bench.baselines import floor_latency, shape_latency, shape_throughput
from bench.harness import BenchStack, bench_stack, new_agent, percentile, record, worker_process
from bench.plain_pipeline import make_event
from bench.premodel_path import SEGMENTS, Mark, breakdown
from schemas.events import Outcome
from store.db import Database
from systemtests.soak.script import soak_script
from temporal import inbox
from temporal.inbox import update_id


@dataclass
class Variant:
    """One worker tree and what was measured with it."""

    name: str
    tree: Path
    sandboxed: bool = True
    pre: list[float] = field(default_factory=list)
    post: list[float] = field(default_factory=list)
    total: list[float] = field(default_factory=list)
    worker_cpu: list[float] = field(default_factory=list)
    server_cpu: list[float] = field(default_factory=list)
    throughput: list[float] = field(default_factory=list)
    failures: list[float] = field(default_factory=list)
    segments: dict[str, list[float]] = field(default_factory=dict)


def _cpu_ms(process: psutil.Process) -> float:
    times = process.cpu_times()
    return (times.user + times.system) * 1000


def server_process(stack: BenchStack) -> psutil.Process:
    """The dev server serving ``stack`` (found by its frontend port)."""
    port = stack.temporal_address.rsplit(":", 1)[1]
    for process in psutil.process_iter(["cmdline"]):
        cmdline = process.info["cmdline"] or []
        if "start-dev" in cmdline and port in cmdline:
            return process
    raise RuntimeError(f"no dev server on port {port}")


async def model_call_window(db: Database, activation_id: str) -> tuple[datetime, float]:
    """When the reply's model call ended and how long it took (from the usage ledger)."""
    for _ in range(200):
        async with db.engine.connect() as connection:
            row = (
                await connection.execute(
                    text(
                        "SELECT occurred_at, latency_ms FROM usage_records "
                        "WHERE activation = :a AND stage = 'respond' ORDER BY occurred_at LIMIT 1"
                    ),
                    {"a": activation_id},
                )
            ).first()
        if row is not None:
            return row[0], float(row[1])
        await asyncio.sleep(0.02)  # the ledger writes off the call's path
    raise RuntimeError(f"no usage record for activation {activation_id}")


TEXT = "message {i}"
"""The default message: the echo model's reply to it is too short to be critiqued."""

SUBSTANTIVE = "do you remember what we agreed about message {i}?"
"""A message whose echoed reply speaks of the past: every reply gets deferred deliberation."""


async def sequential(
    stack: BenchStack,
    db: Database,
    queue: str,
    handle: str,
    n: int,
    variant: Variant | None,
    text: str = TEXT,
    pause_s: float = 0.0,
) -> None:
    """``n`` messages one after another; with ``variant``, record their split latencies.

    ``pause_s``: how long the sender waits after each receipt before the next message, so
    the work a message leaves running after its receipt (the emotion reading, the
    conversation's evaluation) is done before the next one arrives.
    """
    marks: list[tuple[float, float, str, str]] = []
    for i in range(n):
        event = make_event(text.format(i=i))
        sent = time.time()
        receipt = await inbox.submit(stack.client, handle=handle, event=event, task_queue=queue)
        received = time.time()
        assert receipt.marker is not None and receipt.marker.outcome is Outcome.SPOKE
        marks.append((sent, received, str(receipt.marker.activation_id), update_id(event)))
        if pause_s:
            await asyncio.sleep(pause_s)
    if variant is None:
        return
    paths: list[Mark] = []
    for sent, received, activation_id, update in marks:
        ended, latency_ms = await model_call_window(db, activation_id)
        model_end = ended.timestamp()
        variant.pre.append((model_end - latency_ms / 1000 - sent) * 1000)
        variant.post.append((received - model_end) * 1000)
        variant.total.append((received - sent) * 1000)
        paths.append(Mark(sent, update, activation_id, model_end - latency_ms / 1000))
    for segment, values in (await breakdown(stack.client, handle, paths)).items():
        variant.segments.setdefault(segment, []).extend(values)


async def concurrent(
    stack: BenchStack, db: Database, queue: str, agents: int, each: int, text: str = TEXT
) -> float:
    """Messages per second from ``agents`` agents talking at once, ``each`` messages apiece."""
    handles = [await new_agent(db) for _ in range(agents)]
    await asyncio.gather(
        *(inbox.start_agent(stack.client, handle=h, task_queue=queue) for h in handles)
    )

    async def talk(handle: str) -> None:
        for i in range(each):
            await inbox.submit(
                stack.client, handle=handle, event=make_event(text.format(i=i)), task_queue=queue
            )

    started = time.perf_counter()
    await asyncio.gather(*(talk(h) for h in handles))
    return agents * each / (time.perf_counter() - started)


def failed_attempts(log: Path) -> int:
    """Activity attempts the worker completed as failed, from its log."""
    if not log.exists():
        return 0
    return log.read_text(errors="replace").count("Completing activity as failed")


async def one_turn(
    stack: BenchStack,
    db: Database,
    variant: Variant,
    messages: int,
    text: str = TEXT,
    script: Path | None = None,
    pause_s: float = 0.0,
) -> None:
    """Start the variant's worker, warm it, then measure latency, CPU and throughput."""
    queue = f"cost-{uuid.uuid4().hex[:6]}"
    server = server_process(stack)
    env = {
        "PERSYN_WORKFLOW_SANDBOX": str(variant.sandboxed).lower(),
        "PYTHONPATH": str(variant.tree),
        **({"PERSYN_SCRIPTED_SCRIPT": str(script)} if script is not None else {}),
    }
    log = stack.home / "logs" / f"worker-{queue}.log"
    cwd = Path.cwd()
    os.chdir(variant.tree)  # the worker imports its packages from its own tree
    try:
        async with worker_process(stack, queue, env) as process:
            os.chdir(cwd)
            worker = psutil.Process(process.pid)
            handle = await new_agent(db)
            # Imports, pools, caches.
            await sequential(stack, db, queue, handle, 20, None, text, pause_s)
            worker_before, server_before = _cpu_ms(worker), _cpu_ms(server)
            failed_before = failed_attempts(log)
            await sequential(stack, db, queue, handle, messages, variant, text, pause_s)
            variant.worker_cpu.append((_cpu_ms(worker) - worker_before) / messages)
            variant.server_cpu.append((_cpu_ms(server) - server_before) / messages)
            variant.failures.append((failed_attempts(log) - failed_before) / messages)
            variant.throughput.append(await concurrent(stack, db, queue, 20, 10, text))
    finally:
        os.chdir(cwd)


def _spread(values: list[float], unit: str, digits: int) -> str:
    """Mean, then each turn's value."""
    turns = ", ".join(f"{v:.{digits}f}" for v in values)
    return f"{statistics.fmean(values):.{digits}f}{unit} ({turns})"


def _ms(values: list[float]) -> str:
    return f"p50 {percentile(values, 0.5):.1f}, p95 {percentile(values, 0.95):.1f} ms"


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument(
        "--variant",
        action="append",
        required=True,
        help="name=tree, or name=tree:nosandbox for a worker without the sandbox",
    )
    parser.add_argument("--messages", type=int, default=100)
    parser.add_argument("--turns", type=int, default=2)
    parser.add_argument(
        "--model",
        choices=("formed", "echo"),
        default="formed",
        help="formed: the scripted model answers every background task well-formed (the "
        "soak's script, no delay); echo: it echoes every request, so each structured background "
        "task (the emotion reading, consolidation) fails and is retried",
    )
    parser.add_argument(
        "--substantive",
        action="store_true",
        help="send messages whose replies are critiqued (deferred deliberation on each one)",
    )
    parser.add_argument(
        "--pause-ms",
        type=float,
        default=0.0,
        help="wait this long after each sequential receipt before the next message, so each "
        "message meets a worker that finished the last one's background work",
    )
    args = parser.parse_args()
    variants = []
    for spec in args.variant:
        name, tree = spec.split("=", 1)
        path, _, mode = tree.partition(":")
        variants.append(Variant(name, Path(path).resolve(), sandboxed=mode != "nosandbox"))
    text = SUBSTANTIVE if args.substantive else TEXT
    async with bench_stack(tuned=True) as stack:
        db = Database(stack.dsn)
        script = (
            soak_script(stack.home / "bench-script.json", respond_delay_ms=0)
            if args.model == "formed"
            else None
        )
        for _ in range(args.turns):
            for variant in variants:
                await one_turn(
                    stack, db, variant, args.messages, text, script, args.pause_ms / 1000
                )
        floor = await floor_latency(stack, 50, sandboxed=True)
        shape = await shape_latency(stack, 100, local_activities=True, sandboxed=True)
        # The design's own limit: the agent starting the activation itself, every step a no-op.
        direct = await shape_latency(stack, 100, local_activities=True, sandboxed=True, direct=True)
        direct_rate = await shape_throughput(stack, 20, 10, sandboxed=True, direct=True)
        await db.aclose()
    round_ms = percentile(floor, 0.5) / 2  # the floor workflow is two workflow-task rounds
    header = "| measurement | " + " | ".join(v.name for v in variants) + " |"
    rows = [
        header,
        "|---" * (len(variants) + 1) + "|",
        "| pre-model: submit to the model request | "
        + " | ".join(_ms(v.pre) for v in variants)
        + " |",
        "| post-model: last token to the receipt | "
        + " | ".join(_ms(v.post) for v in variants)
        + " |",
        "| whole message | " + " | ".join(_ms(v.total) for v in variants) + " |",
        "| worker CPU per message | "
        + " | ".join(_spread(v.worker_cpu, " ms", 0) for v in variants)
        + " |",
        "| server CPU per message | "
        + " | ".join(_spread(v.server_cpu, " ms", 0) for v in variants)
        + " |",
        "| 20 agents x 10 messages at once | "
        + " | ".join(_spread(v.throughput, "/s", 1) for v in variants)
        + " |",
        "| activity attempts failed per message | "
        + " | ".join(_spread(v.failures, "", 2) for v in variants)
        + " |",
    ]
    rows += [
        f"| pre-model, {segment} (p50) | "
        + " | ".join(f"{percentile(v.segments[segment], 0.5):.1f} ms" for v in variants)
        + " |"
        for segment in SEGMENTS
        if all(v.segments.get(segment) for v in variants)
    ]
    lines = [
        f"- {v.name}: pre-model p50 is "
        f"{(percentile(v.pre, 0.5) - percentile(floor, 0.5)) / round_ms:.1f} workflow-task rounds "
        f"above the one-activity floor; the whole message is "
        f"{percentile(v.total, 0.5) / percentile(shape, 0.5):.2f}x the no-op shape"
        for v in variants
    ]
    described = ", ".join(
        f"{v.name} = {v.tree.name}" + ("" if v.sandboxed else " without the sandbox")
        for v in variants
    )
    paused = (
        f", each sent {args.pause_ms:.0f} ms after the receipt of the one before"
        if args.pause_ms
        else ""
    )
    body = f"""
Zero-latency scripted model ({args.model}); each variant's worker is a separate process
started from its own tree, sandbox on unless the variant says otherwise; {args.messages}
sequential messages to one agent after 20 warm-up messages{paused}, then 20 agents x 10 messages,
each "{text.format(i="N")}", in {args.turns} alternating turns per variant on one tuned dev
server (SQLite WAL). Latencies pool every turn; CPU and throughput list each turn. Variants:
{described}.

{chr(10).join(rows)}

- Same run, in-process sandboxed worker: one-activity floor {_ms(floor)}
  ({round_ms:.0f} ms a round); the three-workflow shape with no-op steps and its local
  activities {_ms(shape)}; the agent starting the activation itself (admission's shape) with
  no-op steps {_ms(direct)} ({percentile(direct, 0.5) / percentile(shape, 0.5):.2f}x the no-op
  shape), and 20 x 10 of it at once {direct_rate:.1f}/s: no work at all, the limit of the design
  on this machine.
{chr(10).join(lines)}
"""
    record("The cost of one message around the model call", body)


if __name__ == "__main__":
    asyncio.run(main())
    sys.stdout.flush()
    os._exit(0)
