"""Platform overhead per activation, the cost of durability, throughput and warm start.

Runs on a private embedded stack with a zero-latency scripted model and a real worker process:

* 200+ sequential messages to one agent: latency per activation (submit -> receipt);
* the same pipeline called as plain async functions, no Temporal: durability's cost as a ratio;
* in the same run, the baselines of ``bench.baselines``: the one-activity floor, and Persyn's
  three-workflow shape (and the alternative one) with no-op steps;
* workflow tasks per message in each workflow, counted from the histories;
* the stock dev-server configuration versus the tuned one (the ~50 ms floor's cause);
* 20 agents x 10 messages at once: activations per second;
* worker RSS; warm ``persyn up`` to ready.

Usage: ``python -m bench.activation_latency [--messages 200]``
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

import psutil
from temporalio.api.enums.v1 import EventType
from temporalio.api.history.v1 import HistoryEvent
from temporalio.client import WorkflowHandle

from bench.baselines import floor_latency, shape_latency, shape_throughput
from bench.harness import BenchStack, bench_stack, new_agent, percentile, record, worker_process
from bench.plain_pipeline import make_event, plain_pipeline
from contract import names
from schemas.events import Outcome
from store.db import Database
from temporal import inbox


def summary(values: list[float]) -> str:
    return (
        f"p50 {percentile(values, 0.5):.1f} ms, p95 {percentile(values, 0.95):.1f} ms, "
        f"mean {statistics.fmean(values):.1f} ms (n={len(values)})"
    )


async def sequential(stack: BenchStack, queue: str, handle: str, n: int) -> list[float]:
    latencies = []
    for i in range(n):
        started = time.perf_counter()
        receipt = await inbox.submit(
            stack.client, handle=handle, event=make_event(f"message {i}"), task_queue=queue
        )
        latencies.append((time.perf_counter() - started) * 1000)
        assert receipt.marker is not None and receipt.marker.outcome is Outcome.SPOKE
    return latencies


async def _completed_tasks(handle: WorkflowHandle[Any, Any]) -> list[HistoryEvent]:
    history = await handle.fetch_history()
    done = EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED
    return [e for e in history.events if e.event_type == done]


async def _settled(conversation: WorkflowHandle[Any, Any], activation_id: str) -> int:
    """Completed tasks once the conversation has taken that activation's result."""
    wanted = names.activation_workflow_id(activation_id)
    while True:
        history = await conversation.fetch_history()
        taken = [
            e.event_id
            for e in history.events
            if e.event_type == EventType.EVENT_TYPE_CHILD_WORKFLOW_EXECUTION_COMPLETED
            and e.child_workflow_execution_completed_event_attributes.workflow_execution.workflow_id
            == wanted
        ]
        tasks = await _completed_tasks(conversation)
        if taken and any(t.event_id > taken[0] for t in tasks):
            return len(tasks)
        await asyncio.sleep(0.05)


async def tasks_per_message(stack: BenchStack, queue: str, handle: str) -> dict[str, int]:
    """Workflow tasks each workflow completes for one message (from the histories).

    Counted once the activation and its conversation have finished with the message, not at
    the receipt, which comes back as soon as the agent's lock is released.
    """
    first = await inbox.submit(
        stack.client, handle=handle, event=make_event("open"), task_queue=queue
    )
    assert first.marker is not None
    agent = stack.client.get_workflow_handle(names.agent_workflow_id(handle))
    conversation = stack.client.get_workflow_handle(
        names.conversation_workflow_id(str(first.marker.conversation_id))
    )
    conversation_before = await _settled(conversation, str(first.marker.activation_id))
    agent_before = len(await _completed_tasks(agent))
    receipt = await inbox.submit(
        stack.client, handle=handle, event=make_event("count"), task_queue=queue
    )
    assert receipt.marker is not None
    activation = stack.client.get_workflow_handle(
        names.activation_workflow_id(str(receipt.marker.activation_id))
    )
    await activation.result()
    return {
        "agent": len(await _completed_tasks(agent)) - agent_before,
        "conversation": await _settled(conversation, str(receipt.marker.activation_id))
        - conversation_before,
        "activation": len(await _completed_tasks(activation)),
    }


async def concurrent(stack: BenchStack, queue: str, db: Database, agents: int, each: int) -> float:
    handles = [await new_agent(db) for _ in range(agents)]

    async def talk(handle: str) -> None:
        for i in range(each):
            await inbox.submit(
                stack.client, handle=handle, event=make_event(f"hi {i}"), task_queue=queue
            )

    # Start every agent workflow first so the measured window holds activations only.
    await asyncio.gather(
        *(inbox.start_agent(stack.client, handle=h, task_queue=queue) for h in handles)
    )
    started = time.perf_counter()
    await asyncio.gather(*(talk(h) for h in handles))
    return agents * each / (time.perf_counter() - started)


def warm_up_seconds() -> tuple[float, float]:
    """Cold and warm ``persyn up`` wall time in a fresh home (embedded stack)."""
    from temporal.devserver import free_port

    with tempfile.TemporaryDirectory(prefix="persyn-up-") as home:
        Path(home).chmod(0o755)
        env = {
            **os.environ,
            "PERSYN_HOME": home,
            "PERSYN_TEMPORAL_ADDRESS": f"127.0.0.1:{free_port()}",
            "PERSYN_TEMPORAL_UI_PORT": str(free_port()),
            "PERSYN_POSTGRES_PORT": str(free_port()),
            "PERSYN_PROVIDER": "scripted",
        }
        env.pop("PERSYN_DATABASE_URL", None)
        persyn = [sys.executable, "-m", "cli.main"]
        times = []
        try:
            for _ in range(2):
                started = time.perf_counter()
                subprocess.run([*persyn, "up"], env=env, check=True, capture_output=True)
                times.append(time.perf_counter() - started)
                subprocess.run([*persyn, "down"], env=env, check=True, capture_output=True)
        finally:
            subprocess.run([*persyn, "down"], env=env, check=False, capture_output=True)
    return times[0], times[1]


async def run_config(*, tuned: bool, sandboxed: bool, messages: int) -> dict[str, object]:
    """One server configuration and worker runner: latency, floor, and (tuned) throughput."""
    async with bench_stack(tuned=tuned) as stack:
        db = Database(stack.dsn)
        queue = f"bench-{uuid.uuid4().hex[:6]}"
        env = {"PERSYN_WORKFLOW_SANDBOX": str(sandboxed).lower()}
        async with worker_process(stack, queue, env) as worker:
            handle = await new_agent(db)
            await sequential(stack, queue, handle, 20)  # warm-up: imports, pools, caches
            latencies = await sequential(stack, queue, handle, messages)
            rounds = await tasks_per_message(stack, queue, handle)
            result: dict[str, object] = {
                "latencies": latencies,
                "floor": await floor_latency(stack, 50, sandboxed=sandboxed),
                "shape": await shape_latency(
                    stack, 100, local_activities=False, sandboxed=sandboxed
                ),
                "shape_las": await shape_latency(
                    stack, 100, local_activities=True, sandboxed=sandboxed
                ),
                "direct": await shape_latency(
                    stack, 100, local_activities=True, sandboxed=sandboxed, direct=True
                ),
                "rounds": rounds,
            }
            if tuned:
                if sandboxed:
                    result["plain"] = await plain_pipeline(stack, messages)
                result["throughput"] = await concurrent(stack, queue, db, 20, 10)
                result["shape_throughput"] = await shape_throughput(
                    stack, 20, 10, sandboxed=sandboxed
                )
                result["direct_throughput"] = await shape_throughput(
                    stack, 20, 10, sandboxed=sandboxed, direct=True
                )
                result["rss_mb"] = psutil.Process(worker.pid).memory_info().rss / 2**20
        await db.aclose()
        return result


def _lists(result: dict[str, object], *keys: str) -> list[list[float]]:
    values = [result[key] for key in keys]
    assert all(isinstance(v, list) for v in values)
    return values  # type: ignore[return-value]


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--messages", type=int, default=200)
    args = parser.parse_args()
    stock = await run_config(tuned=False, sandboxed=True, messages=args.messages)
    tuned = await run_config(tuned=True, sandboxed=True, messages=args.messages)
    bare = await run_config(tuned=True, sandboxed=False, messages=args.messages)
    cold, warm = warm_up_seconds()
    t_lat, t_floor, t_shape, t_las, plain = _lists(
        tuned, "latencies", "floor", "shape", "shape_las", "plain"
    )
    b_lat, b_floor = _lists(bare, "latencies", "floor")
    round_ms = percentile(t_floor, 0.5) / 2  # the floor workflow is two workflow tasks

    def every(label: str, key: str) -> tuple[str, ...]:
        return (label, *(summary(*_lists(r, key)) for r in (stock, tuned, bare)))

    def tuned_only(label: str, key: str) -> tuple[str, ...]:
        return (label, "-", *(f"{r[key]:.1f} activations/s" for r in (tuned, bare)))

    table = "\n".join(
        "| " + " | ".join(cells) + " |"
        for cells in [
            ("measurement", "stock dev server", "tuned", "tuned, no sandbox"),
            ("---", "---", "---", "---"),
            every("activation, submit to receipt", "latencies"),
            every("one-activity workflow (floor)", "floor"),
            every("the three-workflow shape, no-op steps", "shape"),
            every("the same with its 8 no-op local activities", "shape_las"),
            every(
                "the agent starting the activation itself (not Persyn's shape), the same steps",
                "direct",
            ),
            (
                "workflow tasks for one message",
                *(str(r["rounds"]) for r in (stock, tuned, bare)),
            ),
            tuned_only("20 agents x 10 messages at once", "throughput"),
            tuned_only("the same shape with no-op steps, 20 x 10 at once", "shape_throughput"),
            tuned_only(
                "the agent starting the activation itself, no-op steps, 20 x 10 at once",
                "direct_throughput",
            ),
            (
                "worker RSS after the run",
                "-",
                f"{tuned['rss_mb']:.0f} MB",
                f"{bare['rss_mb']:.0f} MB",
            ),
        ]
    )
    body = f"""
Zero-latency scripted model, worker as a separate process, {args.messages} sequential messages
to one agent after 20 warm-up messages. Every column runs SQLite in WAL mode; "stock" keeps the
dev server's default dynamic config, "tuned" is what `persyn up` runs (`LOW_LATENCY_CONFIG`),
"no sandbox" is tuned with `PERSYN_WORKFLOW_SANDBOX=false` on the worker.

{table}

- Same pipeline as plain async functions, no Temporal: {summary(plain)}.
  Cost of durability (tuned): p50 ratio {percentile(t_lat, 0.5) / percentile(plain, 0.5):.1f}x,
  p50 difference {percentile(t_lat, 0.5) - percentile(plain, 0.5):.1f} ms.
- Tuned activation p50 is {percentile(t_lat, 0.5) / percentile(t_floor, 0.5):.1f}x the floor p50,
  about {(percentile(t_lat, 0.5) - percentile(t_floor, 0.5)) / round_ms:.1f} floor rounds
  ({round_ms:.0f} ms each) beyond it; without the sandbox
  {(percentile(b_lat, 0.5) - percentile(b_floor, 0.5)) / (percentile(b_floor, 0.5) / 2):.1f}.
- The shape alone (no-op steps, tuned) is
  {(percentile(t_shape, 0.5) - percentile(t_floor, 0.5)) / round_ms:.1f} floor rounds beyond the
  floor; its local activities add {percentile(t_las, 0.5) - percentile(t_shape, 0.5):.1f} ms at
  p50, and Persyn's own work inside the steps the remaining
  {percentile(t_lat, 0.5) - percentile(t_las, 0.5):.1f} ms.
- `persyn up` to ready (fresh home): cold {cold:.1f} s, warm {warm:.1f} s.
"""
    record("Activation latency and durability overhead", body)


if __name__ == "__main__":
    asyncio.run(main())
    sys.stdout.flush()
    os._exit(0)
