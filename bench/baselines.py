"""Baselines on an in-process worker: what the server costs with nothing in the steps.

* the one-activity workflow (``bench.floor``): the server's per-round floor;
* Persyn's three-workflow shape with no-op steps (``bench.topology``), with and without its
  local activities, and the alternative shape (``direct``): latency and throughput.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from typing import Any

from temporalio.client import WorkflowHandle
from temporalio.worker import Worker

from bench.floor import FloorWorkflow, noop
from bench.harness import BenchStack
from bench.topology import ACTIVITIES, WORKFLOWS, InboxWorkflow, SessionWorkflow, Shape
from workers.runner import workflow_runner


def _worker(
    stack: BenchStack,
    queue: str,
    workflows: Sequence[type],
    activities: Sequence[Any],
    *,
    sandboxed: bool,
) -> Worker:
    return Worker(
        stack.client,
        task_queue=queue,
        workflows=workflows,
        activities=activities,
        workflow_runner=workflow_runner(sandboxed=sandboxed),
    )


async def floor_latency(stack: BenchStack, n: int, *, sandboxed: bool) -> list[float]:
    """End-to-end latency of ``n`` one-activity workflows, one after another."""
    queue = f"floor-{uuid.uuid4().hex[:6]}"
    latencies = []
    async with _worker(stack, queue, [FloorWorkflow], [noop], sandboxed=sandboxed):
        for i in range(n):
            started = time.perf_counter()
            await stack.client.execute_workflow(
                FloorWorkflow.run, i, id=f"floor-{uuid.uuid4().hex}", task_queue=queue
            )
            latencies.append((time.perf_counter() - started) * 1000)
    return latencies


@asynccontextmanager
async def shape_inboxes(
    stack: BenchStack, count: int, *, local_activities: bool, sandboxed: bool, direct: bool = False
) -> AsyncIterator[list[WorkflowHandle[InboxWorkflow, None]]]:
    """``count`` inbox/session pairs of the no-op shape on an in-process worker."""
    queue = f"shape-{uuid.uuid4().hex[:6]}"
    shapes = [
        Shape(
            inbox_id=f"bench-inbox-{queue}-{i}",
            session_id=f"bench-session-{queue}-{i}",
            local_activities=local_activities,
            direct=direct,
        )
        for i in range(count)
    ]
    async with _worker(stack, queue, WORKFLOWS, ACTIVITIES, sandboxed=sandboxed):
        sessions = [
            await stack.client.start_workflow(
                SessionWorkflow.run, shape, id=shape.session_id, task_queue=queue
            )
            for shape in shapes
        ]
        inboxes = [
            await stack.client.start_workflow(
                InboxWorkflow.run, shape, id=shape.inbox_id, task_queue=queue
            )
            for shape in shapes
        ]
        try:
            yield inboxes
        finally:
            for handle in inboxes:
                await handle.terminate("benchmark done")
            for session in sessions:
                await session.terminate("benchmark done")


async def shape_latency(
    stack: BenchStack, n: int, *, local_activities: bool, sandboxed: bool, direct: bool = False
) -> list[float]:
    """Submit-to-release latency of the no-op shape, after 10 warm-up inputs."""
    latencies = []
    async with shape_inboxes(
        stack, 1, local_activities=local_activities, sandboxed=sandboxed, direct=direct
    ) as (inbox,):
        for i in range(n + 10):
            started = time.perf_counter()
            assert await inbox.execute_update(InboxWorkflow.submit, i) == i
            if i >= 10:
                latencies.append((time.perf_counter() - started) * 1000)
    return latencies


async def shape_throughput(
    stack: BenchStack, count: int, each: int, *, sandboxed: bool, direct: bool = False
) -> float:
    """Inputs per second through ``count`` no-op shapes at once (with local activities)."""
    async with shape_inboxes(
        stack, count, local_activities=True, sandboxed=sandboxed, direct=direct
    ) as inboxes:

        async def talk(inbox: WorkflowHandle[InboxWorkflow, None]) -> None:
            for i in range(each):
                await inbox.execute_update(InboxWorkflow.submit, i)

        started = time.perf_counter()
        await asyncio.gather(*(talk(inbox) for inbox in inboxes))
        return count * each / (time.perf_counter() - started)
