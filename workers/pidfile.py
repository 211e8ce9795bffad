"""PID files that name one process for good: its PID, start time and command line.

A PID alone is reused by the kernel: after a crash or a reboot the number in a plain PID file
may belong to anything. A record here is trusted only while a live process has the same PID,
the same start time and the same command line; anything else is stale, and nothing is ever
signalled through a stale record.
"""

from __future__ import annotations

import contextlib
import os
import signal
import time
from pathlib import Path

import psutil
from pydantic import BaseModel, ValidationError

from store.private_files import replace_private

_START_TIME_TOLERANCE_S = 0.05
_EXEC_WAIT_S = 2.0


class ProcessRecord(BaseModel):
    """Who a PID file names."""

    pid: int
    started: float
    """The process's start time (seconds since the epoch, as the kernel reports it)."""
    command: list[str]


def record_of(pid: int) -> ProcessRecord | None:
    """The identity of live process ``pid``, or ``None`` if there is none."""
    try:
        process = psutil.Process(pid)
        with process.oneshot():
            if process.status() == psutil.STATUS_ZOMBIE:
                return None
            return ProcessRecord(pid=pid, started=process.create_time(), command=process.cmdline())
    except (psutil.NoSuchProcess, psutil.AccessDenied, psutil.ZombieProcess):
        return None


def _exec_settled(pid: int) -> ProcessRecord | None:
    """``record_of(pid)`` once a process just spawned shows its own command line.

    Between ``fork`` and ``exec`` a child's command line is its parent's, and during ``exec``
    it reads empty: recorded then, the record would never match the program that runs, and the
    process could never be stopped through its file. Waits at most ``_EXEC_WAIT_S``.
    """
    ours = psutil.Process().cmdline() if pid != os.getpid() else None
    deadline = time.monotonic() + _EXEC_WAIT_S
    while True:
        record = record_of(pid)
        settled = record is None or bool(record.command and record.command != ours)
        if settled or time.monotonic() >= deadline:
            return record
        time.sleep(0.005)


def write(path: Path, pid: int) -> ProcessRecord | None:
    """Record process ``pid`` in ``path`` (atomically); ``None`` if it already exited.

    Called right after spawning ``pid``, so it waits (briefly) for the child's own command.
    """
    record = _exec_settled(pid)
    if record is None:
        path.unlink(missing_ok=True)
        return None
    replace_private(path, record.model_dump_json())
    return record


def read(path: Path) -> ProcessRecord | None:
    """The record in ``path`` as written, whether or not its process still runs."""
    try:
        return ProcessRecord.model_validate_json(path.read_text())
    except (OSError, ValidationError):
        return None  # missing, or a plain PID from an older version: not proof of anything


def matches(record: ProcessRecord) -> bool:
    """Whether the process ``record`` names is still the one running under its PID."""
    current = record_of(record.pid)
    return (
        current is not None
        and abs(current.started - record.started) <= _START_TIME_TOLERANCE_S
        and current.command == record.command
    )


def live_pid(path: Path) -> int | None:
    """The PID in ``path`` if that very process still runs, else ``None``."""
    record = read(path)
    return record.pid if record is not None and matches(record) else None


def stop(record: ProcessRecord, *, timeout: float) -> bool:
    """SIGTERM the process ``record`` names, then SIGKILL after ``timeout`` seconds.

    Returns:
        Whether the process was signalled: ``False`` if the record is stale.
    """
    if not matches(record):
        return False
    with contextlib.suppress(ProcessLookupError):
        os.kill(record.pid, signal.SIGTERM)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        _reap(record.pid)
        if not matches(record):
            return True
        time.sleep(0.05)
    if matches(record):
        with contextlib.suppress(ProcessLookupError):
            os.kill(record.pid, signal.SIGKILL)
    _reap(record.pid)
    return True


def stop_file(path: Path, *, timeout: float) -> bool:
    """Stop the process ``path`` names if it is still that process; remove the file.

    Returns:
        Whether a process was signalled.
    """
    record = read(path)
    stopped = record is not None and stop(record, timeout=timeout)
    path.unlink(missing_ok=True)
    return stopped


def _reap(pid: int) -> None:
    # A child of this very process (tests, the supervisor) stays a zombie until waited for.
    with contextlib.suppress(ChildProcessError, OSError):
        os.waitpid(pid, os.WNOHANG)
