"""A starting worker says what it waits for.

A real worker process (``python -m workers.main``) pointed at a PostgreSQL or a Temporal that
does not answer: within seconds its log names the one it waits for (the line ``persyn up``
quotes when the worker is slow), and when its startup wait runs out it exits with an error.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from temporal.devserver import free_port
from tests.harness import Stack

STARTUP_WAIT_S = 8
"""Longer than the worker waits in silence (5 s), short enough for a test."""


def _run_worker(stack: Stack, tmp_path: Path, **env: str) -> tuple[int, str]:
    log = tmp_path / "worker.log"
    environment = {
        **os.environ,
        "PERSYN_HOME": str(stack.home),
        "PERSYN_TEMPORAL_ADDRESS": stack.temporal_address,
        "PERSYN_DATABASE_URL": stack.dsn,
        "PERSYN_PROVIDER": "scripted",
        "PERSYN_TASK_QUEUE": f"waits-{tmp_path.name}",
        "PERSYN_WORKER_STARTUP_WAIT_SECONDS": str(STARTUP_WAIT_S),
        **env,
    }
    with log.open("wb") as out:
        process = subprocess.run(
            [sys.executable, "-m", "workers.main"],
            env=environment,
            stdout=out,
            stderr=subprocess.STDOUT,
            timeout=120,
            check=False,
        )
    return process.returncode, log.read_text()


def test_a_worker_waiting_for_postgres_says_so_then_gives_up(stack: Stack, tmp_path: Path) -> None:
    nobody = f"postgresql+psycopg://persyn:x@127.0.0.1:{free_port()}/persyn"
    code, log = _run_worker(stack, tmp_path, PERSYN_DATABASE_URL=nobody)
    assert code == 1
    [waiting] = [line for line in log.splitlines() if "still waiting for PostgreSQL:" in line]
    assert "connection" in waiting.lower()
    assert "worker failed" in log.rstrip().splitlines()[-1]


def test_a_worker_waiting_for_temporal_says_so_then_gives_up(stack: Stack, tmp_path: Path) -> None:
    nobody = f"127.0.0.1:{free_port()}"
    code, log = _run_worker(stack, tmp_path, PERSYN_TEMPORAL_ADDRESS=nobody)
    assert code == 1
    [waiting] = [line for line in log.splitlines() if "still waiting for Temporal:" in line]
    assert nobody in waiting
    assert "worker failed" in log.rstrip().splitlines()[-1]
