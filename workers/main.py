"""The worker process: ``python -m workers.main`` (started by ``persyn up`` or a container).

Migrates the schema, registers search attributes, then serves the task queue until SIGTERM or
SIGINT, finishing in-flight tasks and flushing meters and spans before it exits.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import logging
import os
import signal
import sys
import time
from collections.abc import Awaitable, Callable
from typing import TypeVar

from sqlalchemy.exc import OperationalError
from temporalio.client import Client

from activities.channels.starting import sweep_forever
from activities.guardrails.rules import RulesError
from activities.memory.encoders.dimensions import DimensionMismatchError, check_dimensions
from activities.sandbox.provider import SandboxConfigError
from activities.scheduling.heartbeats import reconcile_heartbeats
from activities.tools.mcp import ToolServers
from observability import tracing
from observability.metering import sdk_metrics
from schemas.settings import Settings, get_settings
from store.migrate import upgrade
from temporal import search_attributes
from temporal.client import TemporalUnavailableError, connect
from workers import liveness, unstick
from workers.build import build_dependencies, build_worker
from workers.logs import readable_logs
from workers.standby import STANDBY_FLAG, wait_for_promotion
from workers.warm import warm

log = logging.getLogger("persyn.worker")
T = TypeVar("T")

ANNOUNCE_WAIT_AFTER_S = 5.0
"""How long the worker waits for a dependency in silence before it logs what it waits for."""


async def serve() -> None:
    """Run one worker until asked to stop."""
    settings = get_settings()
    if "prometheus" in settings.meters:
        # Before any client exists: the SDK's metrics then share the usage counters' endpoint.
        sdk_metrics.install()
    # `persyn up` starts the worker beside PostgreSQL and Temporal (its imports take longer
    # than they do to start), and a container may start before its database: wait for both.
    deadline = time.monotonic() + settings.worker_startup_wait_seconds
    await _patiently(
        lambda: asyncio.to_thread(
            upgrade, settings.database_dsn(), embedding_dimensions=settings.embedding_dimensions
        ),
        deadline,
    )
    client = await _connect_patiently(settings, deadline)
    await search_attributes.register(client)
    # Autonomy: heartbeat schedules follow their durable records (deleted stays deleted).
    await reconcile_heartbeats(client, settings)
    deps = build_dependencies(settings)
    # Tool servers: each one unreachable is logged and left out, within a bounded timeout,
    # then tried again in the background; its tools join when it comes up.
    deps.tool_servers = await ToolServers.connect(settings.mcp, retry=True)
    if deps.encoder is not None:
        # A changed encoder with old vectors would compare apples with pears: refuse to serve.
        await check_dimensions(deps.db, deps.encoder.dimensions)
    # Workflow modules are imported once per process, not once per run (workers/runner.py).
    worker = build_worker(client, deps, task_queue=settings.task_queue, share_workflow_code=True)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    log.info("worker serving task queue %s at %s", settings.task_queue, settings.temporal_address)
    async with worker:
        # Liveness comes from the worker itself: Temporal lists a dead worker's pollers for
        # minutes, a beacon that stops being renewed goes stale in seconds.
        beacon = asyncio.create_task(liveness.renew_forever(settings, settings.task_queue))
        # Outbox rows left without a delivery run get one (docs/channels.md).
        sweeper = asyncio.create_task(
            sweep_forever(
                deps.db, client, task_queue=settings.task_queue, settings=settings.delivery
            )
        )
        # The encoder and a local model loaded now, not when the first person waits on them.
        warming = asyncio.create_task(warm(deps.gateway, deps.encoder))
        await stop.wait()
        log.info("worker stopping")
        for task in (beacon, sweeper, warming):
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
    await deps.aclose()
    # Observability hook: buffered spans go out before the process exits (bounded wait).
    await asyncio.to_thread(tracing.shutdown)
    del worker, client
    gc.collect()


async def _patiently(step: Callable[[], Awaitable[T]], deadline: float) -> T:
    """``step()``, retried while the database is not answering yet, until ``deadline``."""
    announce_at: float | None = time.monotonic() + ANNOUNCE_WAIT_AFTER_S
    while True:
        try:
            return await step()
        except OperationalError as err:
            if time.monotonic() >= deadline:
                raise
            # Said once, so the log's last line tells `persyn up` (and whoever reads it) what
            # a slow start is waiting for.
            if announce_at is not None and time.monotonic() >= announce_at:
                log.info("still waiting for PostgreSQL: %s", _first_line(err))
                announce_at = None
            await asyncio.sleep(0.1)


async def _connect_patiently(settings: Settings, deadline: float) -> Client:
    """A Temporal client, retried until ``deadline``; a long wait is logged once."""
    first = min(ANNOUNCE_WAIT_AFTER_S, max(0.0, deadline - time.monotonic()))
    try:
        return await connect(settings, ready_within=first)
    except TemporalUnavailableError as err:
        if time.monotonic() >= deadline:
            raise
        log.info("still waiting for Temporal: %s", _first_line(err))
    return await connect(settings, ready_within=max(0.0, deadline - time.monotonic()))


def main() -> None:
    """Entry point."""
    logging.basicConfig(
        level=os.environ.get("PERSYN_LOG_LEVEL", "INFO"),
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    readable_logs()
    if not wait_for_promotion(sys.argv[1:], unstick=_hand_over):
        os._exit(0)  # a spare let go: nothing was started
    if STANDBY_FLAG in sys.argv:
        log.info("spare worker promoted (pid %d): its code was already loaded", os.getpid())
    code = 0
    try:
        asyncio.run(serve())
    except (DimensionMismatchError, SandboxConfigError, RulesError) as err:
        # Settings the operator must fix: one line, no traceback.
        log.error("%s", err)
        code = 2
    except Exception as err:
        # The traceback for whoever debugs it, then one line for `persyn up` to show.
        log.exception("worker failed")
        log.error("worker failed: %s", _first_line(err))
        code = 1
    sys.stdout.flush()
    sys.stderr.flush()
    # Avoid a known interpreter-exit crash of the Temporal runtime (see docs/operations.md).
    os._exit(code)


def _hand_over() -> None:
    """As the spare: hand the dead worker's runs to the shared queue (``workers/unstick.py``)."""
    asyncio.run(unstick.hand_over(get_settings()))


def _first_line(err: BaseException) -> str:
    text = str(err).strip() or type(err).__name__
    return text.splitlines()[0]


if __name__ == "__main__":
    main()
