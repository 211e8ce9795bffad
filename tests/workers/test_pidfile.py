"""PID files name one process: a stale one is ignored, never signalled."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest

from schemas.settings import Settings
from workers import pidfile
from workers.process import MODEL_SERVER, SUPERVISOR, TEMPORAL, WORKER, live_pid, pid_file
from workers.stack import EmbeddedStack


@pytest.fixture
def sleeper() -> Iterator[subprocess.Popen[bytes]]:
    """An unrelated process whose PID a stale file could name."""
    process = subprocess.Popen(["sleep", "300"])
    yield process
    process.kill()
    process.wait()


def test_a_record_names_the_process_by_start_time_and_command(
    tmp_path: Path, sleeper: subprocess.Popen[bytes]
) -> None:
    path = tmp_path / "sleep.pid"
    record = pidfile.write(path, sleeper.pid)

    assert record is not None
    assert record.command == ["sleep", "300"]
    assert record.started == pytest.approx(psutil.Process(sleeper.pid).create_time())
    assert pidfile.live_pid(path) == sleeper.pid


def test_a_process_recorded_before_it_has_run_its_program_is_named_by_that_program(
    tmp_path: Path,
) -> None:
    # Between fork and exec a child's command line is its parent's (and during exec it reads
    # empty): recorded then, the record would never match the program that runs, and the
    # process could never be stopped through its file. This child waits before its exec.
    pid = os.fork()
    if pid == 0:  # the child: it sleeps, then runs sleep, and never returns into the tests
        try:
            time.sleep(0.3)
            os.execvp("sleep", ["sleep", "300"])
        finally:
            os._exit(127)
    try:
        record = pidfile.write(tmp_path / "late.pid", pid)
        assert record is not None and record.command == ["sleep", "300"]
        assert pidfile.live_pid(tmp_path / "late.pid") == pid
    finally:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)


@pytest.mark.parametrize(
    "forged",
    [
        {"started": 1.0},  # the PID was reused by a later process
        {"command": [sys.executable, "-m", "workers.main"]},  # same PID, another program
    ],
)
def test_a_record_that_no_longer_matches_is_never_signalled(
    tmp_path: Path, sleeper: subprocess.Popen[bytes], forged: dict[str, object]
) -> None:
    record = pidfile.record_of(sleeper.pid)
    assert record is not None
    path = tmp_path / "worker.pid"
    path.write_text(record.model_copy(update=forged).model_dump_json())

    assert pidfile.live_pid(path) is None
    assert pidfile.stop_file(path, timeout=1) is False
    assert sleeper.poll() is None  # still running
    assert not path.exists()


def test_a_plain_pid_from_an_older_version_proves_nothing(
    tmp_path: Path, sleeper: subprocess.Popen[bytes]
) -> None:
    path = tmp_path / "worker.pid"
    path.write_text(str(sleeper.pid))

    assert pidfile.live_pid(path) is None
    assert pidfile.stop_file(path, timeout=1) is False
    assert sleeper.poll() is None


def test_a_matching_record_stops_its_process(
    tmp_path: Path, sleeper: subprocess.Popen[bytes]
) -> None:
    path = tmp_path / "sleep.pid"
    pidfile.write(path, sleeper.pid)

    assert pidfile.stop_file(path, timeout=5) is True
    assert pidfile.record_of(sleeper.pid) is None  # gone (and reaped)
    assert not path.exists()


async def test_down_leaves_an_unrelated_process_alone(
    tmp_path: Path, sleeper: subprocess.Popen[bytes]
) -> None:
    # Every PID file of a home points at the sleeper, as after a reboot reused its PID.
    settings = Settings(home=tmp_path, embedded=False, database_url="postgresql://nowhere/x")
    settings.run_dir.mkdir(parents=True)
    record = pidfile.record_of(sleeper.pid)
    assert record is not None
    stale = record.model_copy(update={"started": record.started - 3600})
    for name in (SUPERVISOR, WORKER, MODEL_SERVER, TEMPORAL):
        pid_file(settings, name).write_text(stale.model_dump_json())
        assert live_pid(settings, name) is None

    await asyncio.to_thread(EmbeddedStack(settings).down)

    assert sleeper.poll() is None
    assert psutil.Process(sleeper.pid).cmdline() == ["sleep", "300"]
