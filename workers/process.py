"""The worker process of one Persyn home: its environment, pid file, start and stop.

Kept free of heavy imports so ``persyn up`` can start the worker before it loads anything
else: the worker's own imports then run beside the command's.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from schemas.settings import Settings


def pid_file(settings: Settings, name: str) -> Path:
    """Where the pid of component ``name`` is kept."""
    return settings.run_dir / f"{name}.pid"


def read_pid(path: Path) -> int | None:
    """The pid in ``path`` if that process is alive, else ``None``."""
    try:
        pid = int(path.read_text().strip())
    except (OSError, ValueError):
        return None
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return None
    return pid


def stop_pid(pid: int, *, timeout: float) -> None:
    """SIGTERM, then SIGKILL after ``timeout`` seconds."""
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return
        # Reap our own child if it was started by this process (tests).
        with contextlib.suppress(ChildProcessError):
            os.waitpid(pid, os.WNOHANG)
        time.sleep(0.05)
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGKILL)


def worker_environment(settings: Settings) -> dict[str, str]:
    """Where the worker must connect: the same stack ``settings`` describe.

    Everything else (providers, memory, meters) the worker reads from the environment and
    ``persyn.toml`` as usual.
    """
    env = {
        "PERSYN_HOME": str(settings.home),
        "PERSYN_EMBEDDED": "true" if settings.embedded else "false",
        "PERSYN_TEMPORAL_ADDRESS": settings.temporal_address,
        "PERSYN_TEMPORAL_NAMESPACE": settings.temporal_namespace,
        "PERSYN_TASK_QUEUE": settings.task_queue,
        "PERSYN_POSTGRES_PORT": str(settings.postgres_port),
        "PERSYN_WORKER_STARTUP_WAIT_SECONDS": str(settings.worker_startup_wait_seconds),
    }
    if settings.database_url is not None:
        env["PERSYN_DATABASE_URL"] = settings.database_url.get_secret_value()
    return env


@dataclass(frozen=True)
class Started:
    """What :func:`start_worker` did: the new process, or ``None`` if one was running."""

    process: subprocess.Popen[bytes] | None


def start_worker(settings: Settings) -> Started:
    """Start the worker process unless one is already running."""
    settings.run_dir.mkdir(parents=True, exist_ok=True)
    settings.log_dir.mkdir(parents=True, exist_ok=True)
    if read_pid(pid_file(settings, "worker")) is not None:
        return Started(process=None)
    log = (settings.log_dir / "worker.log").open("ab")
    process = subprocess.Popen(
        [sys.executable, "-m", "workers.main"],
        stdout=log,
        stderr=subprocess.STDOUT,
        stdin=subprocess.DEVNULL,
        env={**os.environ, **worker_environment(settings)},
        start_new_session=True,
    )
    log.close()
    pid_file(settings, "worker").write_text(str(process.pid))
    return Started(process=process)


def last_line(log: Path) -> str:
    """The last thing the worker logged: usually why it exited."""
    try:
        lines = log.read_text(errors="replace").strip().splitlines()
    except OSError:
        return "no log"
    return lines[-1][-200:] if lines else "no output"
