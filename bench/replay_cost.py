"""What a restarted worker pays to rebuild its workflows: replay CPU against history length.

A worker that starts (after a crash, a deploy, a kill in the soak) has no workflow cached: the
first task of every open workflow replays that run's whole history before it does new work.
This benchmark reads the histories of a running stack's open Persyn workflows (a soak kept
with ``--keep`` and brought back with ``persyn up``, or any stack), replays each one in this
process as the worker process would (the shared sandbox), and reports process CPU per
history: by workflow type, per thousand events, and the total a fresh worker pays before it
has caught up with all of them.

Usage: ``python -m bench.replay_cost [--address HOST:PORT] [--limit 200] [--record]``
(``PERSYN_HOME`` and the settings name the stack, as for the CLI).
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time
from collections import defaultdict
from dataclasses import dataclass

from temporalio.client import Client, WorkflowHistory

from bench.harness import record
from schemas.settings import Settings
from temporal.client import connect
from workers import replay


@dataclass(frozen=True)
class Replayed:
    """One history replayed: its type, its length, and the CPU its replay took."""

    workflow_type: str
    events: int
    cpu_ms: float


async def open_histories(client: Client, limit: int) -> list[tuple[str, WorkflowHistory]]:
    """The histories of up to ``limit`` open workflows, with their types."""
    found = []
    async for execution in client.list_workflows("ExecutionStatus='Running'", limit=limit):
        handle = client.get_workflow_handle(execution.id, run_id=execution.run_id)
        found.append((execution.workflow_type, await handle.fetch_history()))
    return found


async def replay_all(
    client: Client, histories: list[tuple[str, WorkflowHistory]]
) -> list[Replayed]:
    """Replay each history once (after one warm-up replay) and time it in process CPU."""
    # As the worker process runs them: sandboxed, with the workflow modules shared.
    replayer = replay.replayer(client, share_workflow_code=True)
    if histories:
        await replayer.replay_workflow(histories[0][1], raise_on_replay_failure=False)
    timed = []
    for workflow_type, history in histories:
        started = time.process_time()
        result = await replayer.replay_workflow(history, raise_on_replay_failure=False)
        cpu_ms = (time.process_time() - started) * 1000
        if result.replay_failure is not None:
            print(f"{history.workflow_id}: replay failed: {result.replay_failure}", file=sys.stderr)
            continue
        timed.append(Replayed(workflow_type, len(history.events), cpu_ms))
    return timed


def render(timed: list[Replayed]) -> str:
    """A table by workflow type and the total a fresh worker pays."""
    by_type: dict[str, list[Replayed]] = defaultdict(list)
    for item in timed:
        by_type[item.workflow_type].append(item)
    lines = [
        "| workflow type | open runs | events (median, max) | replay CPU ms (median, max) "
        "| CPU ms per 1,000 events |",
        "|---|---|---|---|---|",
    ]
    for workflow_type, items in sorted(by_type.items()):
        events = [i.events for i in items]
        cpu = [i.cpu_ms for i in items]
        per_k = 1000 * sum(cpu) / max(1, sum(events))
        lines.append(
            f"| {workflow_type} | {len(items)} | {statistics.median(events):.0f}, {max(events)} "
            f"| {statistics.median(cpu):.0f}, {max(cpu):.0f} | {per_k:.0f} |"
        )
    total_events = sum(i.events for i in timed)
    total_s = sum(i.cpu_ms for i in timed) / 1000
    lines += [
        "",
        f"- open runs replayed: {len(timed)}, {total_events} events in all",
        f"- a fresh worker's replay of them all: {total_s:.1f} s of CPU (one core: workflow "
        "code runs under one interpreter lock)",
    ]
    return "\n".join(lines)


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--address", help="Temporal's address (default: the settings').")
    parser.add_argument("--limit", type=int, default=200, help="Open workflows to replay.")
    parser.add_argument("--record", action="store_true", help="Append the figures to RESULTS.md.")
    args = parser.parse_args()
    client = await connect(Settings(), address=args.address)
    timed = await replay_all(client, await open_histories(client, args.limit))
    text = render(timed)
    if args.record:
        record("Replay cost of a fresh worker, by history length", text)
    else:
        print(text)


if __name__ == "__main__":
    asyncio.run(main())
