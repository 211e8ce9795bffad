"""Workflow-side CPU per activation under each workflow runner, from a recorded history.

Every message starts a fresh ``ActivationWorkflow`` run, so the sandbox builds a new instance
for it (and, strict, re-imports the workflow modules). Replaying the recorded activation
history (``tests/histories/activation.json``) runs exactly that workflow code, with its local
activities answered from their markers: no server, no database, one process. Its CPU time
(``time.process_time``) is therefore the workflow side of a message alone, and stays readable
on a machine shared with other work, where latencies and whole-process counters do not.

Runners, interleaved in blocks: strict (tests, the replayer), shared (the worker process:
``workflows`` passed through as well), shared as the SDK runs it (entering the sandbox for each
payload's serialization context, which Persyn's runner reads directly) and none
(``PERSYN_WORKFLOW_SANDBOX=false``).

Usage: ``python -m bench.runner_cost --runs 300``
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import time
from collections.abc import AsyncIterator, Callable
from pathlib import Path

from temporalio.client import WorkflowHistory
from temporalio.worker import Replayer, WorkflowRunner
from temporalio.worker.workflow_sandbox import SandboxedWorkflowRunner

from bench.harness import record
from schemas.settings import Settings
from temporal.client import data_converter
from workers.build import WORKFLOWS
from workers.runner import workflow_runner

HISTORY = Path(__file__).parent.parent / "tests" / "histories" / "activation.json"


def _sdk_shared() -> WorkflowRunner:
    """The shared mode's restrictions under the SDK's own sandbox runner."""
    shared = workflow_runner(share_workflow_code=True)
    assert isinstance(shared, SandboxedWorkflowRunner)
    return SandboxedWorkflowRunner(restrictions=shared.restrictions)


RUNNERS: dict[str, Callable[[], WorkflowRunner]] = {
    "strict": workflow_runner,
    "shared": lambda: workflow_runner(share_workflow_code=True),
    "shared, SDK's context lookup": _sdk_shared,
    "none": lambda: workflow_runner(sandboxed=False),
}


async def cpu_per_run(runner: str, history: WorkflowHistory, runs: int) -> float:
    """Milliseconds of process CPU per replayed run of ``history`` under ``runner``."""
    replayer = Replayer(
        workflows=WORKFLOWS,
        workflow_runner=RUNNERS[runner](),
        data_converter=data_converter(Settings(), codec=False),
    )
    await replayer.replay_workflow(history)  # the replayer's own start, outside the count

    async def repeated() -> AsyncIterator[WorkflowHistory]:
        for _ in range(runs):
            yield history

    started = time.process_time()
    results = await replayer.replay_workflows(repeated(), raise_on_replay_failure=True)
    assert results.replay_failures == {}
    return (time.process_time() - started) * 1000 / runs


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=300, help="replays per block")
    parser.add_argument("--blocks", type=int, default=3, help="blocks per runner, interleaved")
    args = parser.parse_args()
    history = WorkflowHistory.from_json(HISTORY.stem, HISTORY.read_text())
    figures: dict[str, list[float]] = {name: [] for name in RUNNERS}
    for _ in range(args.blocks):
        for name in RUNNERS:
            figures[name].append(await cpu_per_run(name, history, args.runs))
    strict = statistics.median(figures["strict"])
    rows = [
        "| runner | CPU ms per activation run (median of blocks) | blocks | against strict |",
        "|---|---|---|---|",
        *(
            f"| {name} | {statistics.median(values):.2f} | "
            f"{', '.join(f'{v:.2f}' for v in values)} | "
            f"{statistics.median(values) - strict:+.2f} ms |"
            for name, values in figures.items()
        ),
    ]
    load = os.getloadavg()[0]
    body = f"""
`python -m bench.runner_cost --runs {args.runs} --blocks {args.blocks}`: the recorded activation
history (`tests/histories/activation.json`, one message's activation with its local activities
as markers) replayed {args.runs} times per block, runners interleaved; process CPU time, one
process, no server or database. Load average (1 min) at the end: {load:.1f} on
{os.cpu_count()} cores.

{chr(10).join(rows)}
"""
    record("Workflow-side CPU per activation, by workflow runner", body)


if __name__ == "__main__":
    asyncio.run(main())
    sys.stdout.flush()
    os._exit(0)
