"""The processes of one Persyn home: where their records live, their environment, the start.

``persyn up`` starts one supervisor (:mod:`workers.supervisor`), which owns the worker and the
other supervised processes. Inbound channel processes are named in their registry
(:mod:`workers.channel_processes`), not here. Kept free of heavy imports so ``persyn up`` can start
the supervisor, and with it the worker, before it loads anything else: the worker's own imports
then run beside the command's.
"""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from schemas.settings import Settings
from store.private_files import open_private, private_dir
from workers import pidfile

SUPERVISOR = "supervisor"
WORKER = "worker"
MODEL_SERVER = "model-server"
CODEC = "codec"
TEMPORAL = "temporal"


def pid_file(settings: Settings, name: str) -> Path:
    """Where the record of component ``name`` is kept (see :mod:`workers.pidfile`)."""
    return settings.run_dir / f"{name}.pid"


def live_pid(settings: Settings, name: str) -> int | None:
    """The PID of component ``name`` if the very process its record names still runs."""
    return pidfile.live_pid(pid_file(settings, name))


def log_file(settings: Settings, name: str) -> Path:
    """The log of component ``name``."""
    return settings.log_dir / f"{name}.log"


def worker_environment(settings: Settings) -> dict[str, str]:
    """Where the supervised processes must connect: the same stack ``settings`` describe.

    Everything else (providers, memory, meters) they read from the environment and
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
        "PERSYN_LOCAL_MODEL_PORT": str(settings.local_model_port),
    }
    if settings.database_url is not None:
        env["PERSYN_DATABASE_URL"] = settings.database_url.get_secret_value()
    return env


@dataclass(frozen=True)
class Started:
    """What :func:`start_supervisor` did: the new process, or ``None`` if one was running."""

    process: subprocess.Popen[bytes] | None


def start_supervisor(settings: Settings) -> Started:
    """Start the supervisor (and through it the worker) unless one is already running."""
    private_dir(settings.home)
    private_dir(settings.run_dir)
    if live_pid(settings, SUPERVISOR) is not None:
        return Started(process=None)
    with open_private(log_file(settings, SUPERVISOR), "ab") as log:
        process = subprocess.Popen(
            [sys.executable, "-m", "workers.supervisor"],
            stdout=log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            env={**os.environ, **worker_environment(settings)},
            # Its own session: closing the terminal that ran `persyn up` does not reach it.
            start_new_session=True,
        )
    pidfile.write(pid_file(settings, SUPERVISOR), process.pid)
    return Started(process=process)


def last_line(log: Path) -> str:
    """The last thing a process logged: usually why it exited."""
    try:
        with log.open("rb") as file:
            file.seek(max(0, file.seek(0, os.SEEK_END) - 8192))
            lines = file.read().decode(errors="replace").strip().splitlines()
    except OSError:
        return "no log"
    return lines[-1][-200:] if lines else "no output"
