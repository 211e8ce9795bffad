"""The worker's own liveness signal: a beacon file it renews while it serves.

Temporal keeps listing a dead worker's pollers for minutes, so "someone polls the task queue"
says little about now. Each serving worker rewrites ``run/liveness/worker-{pid}.json`` every
``worker_liveness_seconds``; a beacon counts while it is younger than three intervals and the
process it names (PID, start time, command line) still runs. A worker that hangs stops renewing
it, and one that dies leaves a beacon naming a process that is gone.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import time
from pathlib import Path

from pydantic import BaseModel, ValidationError

from schemas.settings import Settings
from store.private_files import replace_private
from workers import pidfile

STALE_AFTER_INTERVALS = 3


class Beacon(BaseModel):
    """What a serving worker says about itself."""

    process: pidfile.ProcessRecord
    task_queue: str
    at: float
    """When it was renewed (seconds since the epoch)."""


def beacon_dir(settings: Settings) -> Path:
    """Where the workers of this home keep their beacons."""
    return settings.run_dir / "liveness"


def beacon_path(settings: Settings, pid: int) -> Path:
    """The beacon of worker ``pid``."""
    return beacon_dir(settings) / f"worker-{pid}.json"


def beacons(settings: Settings) -> list[Beacon]:
    """Every readable beacon of this home, fresh or not."""
    found = []
    for path in sorted(beacon_dir(settings).glob("worker-*.json")):
        try:
            found.append(Beacon.model_validate_json(path.read_text()))
        except (OSError, ValidationError):
            continue  # being replaced, or not ours
    return found


def is_fresh(beacon: Beacon, settings: Settings, *, now: float | None = None) -> bool:
    """Whether ``beacon`` was renewed recently by the process it names."""
    age = (time.time() if now is None else now) - beacon.at
    limit = STALE_AFTER_INTERVALS * settings.worker_liveness_seconds
    return age <= limit and pidfile.matches(beacon.process)


def alive(settings: Settings, task_queue: str | None = None) -> list[Beacon]:
    """Fresh beacons of workers serving ``task_queue`` (default: the configured one)."""
    queue = task_queue or settings.task_queue
    return [b for b in beacons(settings) if b.task_queue == queue and is_fresh(b, settings)]


def forget(settings: Settings, pid: int) -> None:
    """Drop the beacon of worker ``pid`` (it exited)."""
    beacon_path(settings, pid).unlink(missing_ok=True)


async def renew_forever(settings: Settings, task_queue: str) -> None:
    """Write this process's beacon now and every interval until cancelled; then remove it."""
    me = pidfile.record_of(os.getpid())
    if me is None:  # pragma: no cover - this process is running
        return
    path = beacon_path(settings, me.pid)
    try:
        while True:
            beacon = Beacon(process=me, task_queue=task_queue, at=time.time())
            await asyncio.to_thread(replace_private, path, beacon.model_dump_json())
            await asyncio.sleep(settings.worker_liveness_seconds)
    finally:
        with contextlib.suppress(OSError):
            path.unlink(missing_ok=True)
