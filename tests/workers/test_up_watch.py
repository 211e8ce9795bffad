"""``persyn up`` watches what it started while the worker starts.

A real Temporal dev server and PostgreSQL in a private home; the supervisor is a stand-in process
that never serves, so ``up`` stays in its wait. If Temporal or PostgreSQL dies meanwhile, ``up``
names the one that stopped at once instead of blaming the worker when its minute runs out; and
when the worker is the slow one, the error quotes the last thing it logged.
"""

from __future__ import annotations

import os
import signal
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from schemas.settings import Settings
from temporal.devserver import free_port
from workers import pidfile
from workers.process import TEMPORAL, WORKER, Started, log_file, pid_file
from workers.stack import EmbeddedStack, StackError

UP_TIMEOUT_S = 60.0


@pytest.fixture
def stack() -> Iterator[EmbeddedStack]:
    # Not pytest's tmp_path: the embedded PostgreSQL may run as another user and must reach it.
    with tempfile.TemporaryDirectory(prefix="persyn-up-watch-") as path:
        Path(path).chmod(0o755)
        settings = Settings(
            home=Path(path) / "home",
            temporal_address=f"127.0.0.1:{free_port()}",
            temporal_ui_port=free_port(),
            postgres_port=free_port(),
            worker_standby=False,
        )
        embedded = EmbeddedStack(settings)
        try:
            yield embedded
        finally:
            embedded.down()


@pytest.fixture
def never_serves() -> Iterator[Started]:
    """A live process in the supervisor's place: no state, no worker, no beacon."""
    process = subprocess.Popen(["sleep", "300"])
    try:
        yield Started(process=process)
    finally:
        process.kill()
        process.wait()


def _once_waiting(
    stack: EmbeddedStack, monkeypatch: pytest.MonkeyPatch, then: Callable[[], None]
) -> threading.Thread:
    """Run ``then`` in the background once ``up`` has started everything and waits."""
    waiting = threading.Event()
    wait_until_serving = stack._wait_until_serving

    def entered(*args: Any) -> None:
        waiting.set()
        wait_until_serving(*args)

    monkeypatch.setattr(stack, "_wait_until_serving", entered)

    def act() -> None:
        if waiting.wait(UP_TIMEOUT_S):
            then()

    thread = threading.Thread(target=act, daemon=True)
    thread.start()
    return thread


def _kill_temporal(stack: EmbeddedStack) -> None:
    pid = pidfile.live_pid(pid_file(stack.settings, TEMPORAL))
    assert pid is not None
    os.kill(pid, signal.SIGKILL)


def _up_failing(
    stack: EmbeddedStack,
    never_serves: Started,
    monkeypatch: pytest.MonkeyPatch,
    then: Callable[[], None],
) -> tuple[str, float]:
    """``up`` with ``then`` done while it waits: its error and the seconds it took."""
    actor = _once_waiting(stack, monkeypatch, then)
    began = time.monotonic()
    with pytest.raises(StackError) as raised:
        stack.up(timeout=UP_TIMEOUT_S, supervisor=never_serves)
    actor.join()
    return str(raised.value), time.monotonic() - began


def test_temporal_dying_while_the_worker_starts_is_named_at_once(
    stack: EmbeddedStack, never_serves: Started, monkeypatch: pytest.MonkeyPatch
) -> None:
    message, took = _up_failing(stack, never_serves, monkeypatch, lambda: _kill_temporal(stack))
    assert message.startswith("Temporal stopped while the worker was starting")
    assert str(log_file(stack.settings, TEMPORAL)) in message
    # Named within seconds of the kill, not when the worker's minute ran out.
    assert took < UP_TIMEOUT_S / 2


def test_postgres_dying_while_the_worker_starts_is_named_at_once(
    stack: EmbeddedStack, never_serves: Started, monkeypatch: pytest.MonkeyPatch
) -> None:
    message, took = _up_failing(stack, never_serves, monkeypatch, stack.postgres().stop)
    assert message.startswith("PostgreSQL stopped while the worker was starting")
    assert str(stack.postgres().log_file) in message
    assert took < UP_TIMEOUT_S / 2


def test_a_worker_that_does_not_serve_in_time_is_quoted(
    stack: EmbeddedStack, never_serves: Started
) -> None:
    log = log_file(stack.settings, WORKER)
    log.parent.mkdir(parents=True, exist_ok=True)
    log.write_text("INFO persyn.worker: still waiting for Temporal: nothing answers\n")
    with pytest.raises(StackError) as raised:
        stack.up(timeout=3, supervisor=never_serves)
    message = str(raised.value)
    assert message.startswith("the worker is not serving after 3s")
    assert "(last logged: INFO persyn.worker: still waiting for Temporal: nothing answers)" in (
        message
    )
    # Temporal and PostgreSQL were fine throughout: the worker is the one named.
    assert pidfile.live_pid(pid_file(stack.settings, TEMPORAL)) is not None
