"""Hand a dead worker's runs back to the shared task queue: ``python -m workers.unstick``.

A worker keeps the runs it served in its cache, and Temporal sends each run's next task to
that worker's own (sticky) queue. When the worker is killed, a task sent there waits out the
sticky timeout (10 s) before it moves to the shared queue, and Temporal keeps choosing the
dead worker's queue for 10 s after its last poll. A message that crosses the agent, its
conversation and an activation can wait twice.

The supervisor has this done the moment it sees its worker die uncleanly: by the worker's
waiting spare, already loaded (``workers/standby.py``), or else by this module as a process.
Each open run on the task queue has its sticky queue reset, so its next task goes to the
shared queue and the restarted worker takes it as soon as it polls. A task already sent to
the dead queue still waits out the sticky timeout (a message that arrived between the death and
the reset: hence the spare, which makes that window short); a task the dead worker had
started waits out the task timeout.

With several workers on one task queue, runs cached on the live ones are reset too. That
costs each of them one replay, on its next task: cheaper than a run waiting 20 s.
"""

from __future__ import annotations

import asyncio
import logging
import os
import sys
import time

from temporalio.api.common.v1 import WorkflowExecution
from temporalio.api.workflowservice.v1 import ResetStickyTaskQueueRequest
from temporalio.client import Client
from temporalio.service import RPCError, RPCStatusCode

from schemas.settings import Settings, get_settings
from temporal.client import TemporalUnavailableError, connect

log = logging.getLogger("persyn.unstick")

CONCURRENCY = 16
"""Resets in flight at once: a few hundred open runs take well under a second."""

DEADLINE_S = 30.0
"""After this the restarted worker has long been serving; the rest wait out their timeouts."""


def open_runs_query(task_queue: str) -> str:
    """The visibility query for the running workflows of ``task_queue``."""
    quoted = task_queue.replace("\\", "\\\\").replace('"', '\\"')
    return f'TaskQueue = "{quoted}" AND ExecutionStatus = "Running"'


async def unstick(client: Client, task_queue: str) -> int:
    """Reset the sticky queue of every open run on ``task_queue``; how many were reset.

    A run that closed between the listing and its reset is skipped.
    """
    runs = [
        WorkflowExecution(workflow_id=run.id, run_id=run.run_id)
        async for run in client.list_workflows(open_runs_query(task_queue))
    ]
    gate = asyncio.Semaphore(CONCURRENCY)

    async def reset(run: WorkflowExecution) -> bool:
        async with gate:
            try:
                await client.workflow_service.reset_sticky_task_queue(
                    ResetStickyTaskQueueRequest(namespace=client.namespace, execution=run)
                )
            except RPCError as err:
                if err.status == RPCStatusCode.NOT_FOUND:  # it closed meanwhile
                    return False
                raise
            return True

    return sum(await asyncio.gather(*(reset(run) for run in runs)))


async def hand_over(settings: Settings) -> int:
    """Connect and reset every open run of the settings' task queue; 0, or 1 if it failed.

    It logs one line either way: how many runs went over and how long it took, or why not.
    """
    began = time.monotonic()
    try:
        # No payload is read or written: the codec (and its keyring) is not needed.
        client = await connect(settings, codec=False, ready_within=5.0)
        count = await asyncio.wait_for(unstick(client, settings.task_queue), DEADLINE_S)
    except (TemporalUnavailableError, RPCError, TimeoutError) as err:
        # Nothing is lost: each run's next task reaches the shared queue after its timeout.
        log.warning("could not hand the dead worker's runs to the shared queue: %s", err)
        return 1
    log.info(
        "handed %d open runs on task queue %s to the shared queue in %.1f s",
        count,
        settings.task_queue,
        time.monotonic() - began,
    )
    return 0


def main() -> None:
    """Entry point (the supervisor's, after its worker died)."""
    logging.basicConfig(
        level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s"
    )
    code = asyncio.run(hand_over(get_settings()))
    sys.stdout.flush()
    sys.stderr.flush()
    # As the worker does: avoid a known interpreter-exit crash of the Temporal runtime.
    os._exit(code)


if __name__ == "__main__":
    main()
