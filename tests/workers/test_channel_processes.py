"""Inbound channel processes come from one registry: a channel registered there is run, reported
and stopped by the supervisor, ``persyn down`` and ``persyn status``, none of them edited.

The fake channel (:mod:`tests.workers.fake_channel`) is registered the way a new channel's one
line in ``workers/channel_processes.py`` would register it, and runs as a real process.
"""

from __future__ import annotations

import asyncio
import importlib.util
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from schemas.settings import Settings
from tests.harness import until
from tests.workers.fake_channel import FAKE, MARKER, READING, STOPPED
from workers import channel_processes, pidfile
from workers.health import channel_statuses
from workers.process import CODEC, MODEL_SERVER, SUPERVISOR, TEMPORAL, WORKER, log_file, pid_file
from workers.stack import EmbeddedStack
from workers.supervisor import children, stop_graces

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def fake_registered(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(channel_processes, "REGISTRY", (*channel_processes.REGISTRY, FAKE))


@pytest.fixture
def home(tmp_path: Path) -> Iterator[Settings]:
    settings = Settings(home=tmp_path / "home", embedded=False, worker_standby=False)
    settings.home.mkdir(mode=0o700)
    yield settings
    EmbeddedStack(settings).down()  # whatever a failed test left running


def test_every_registered_channel_has_its_own_name_and_a_runnable_module() -> None:
    names = [process.name for process in channel_processes.REGISTRY]
    stack_own = {SUPERVISOR, WORKER, MODEL_SERVER, CODEC, TEMPORAL, "postgres", "web-ui"}

    assert names and len(set(names)) == len(names)
    assert not set(names) & stack_own
    for process in channel_processes.REGISTRY:
        assert importlib.util.find_spec(f"{process.module}.__main__") is not None, process.module
        assert process.command() == [sys.executable, "-m", process.module]


@pytest.mark.usefixtures("fake_registered")
def test_a_registered_channel_is_supervised_and_reported_only_when_configured(
    home: Settings,
) -> None:
    assert FAKE.name not in [child.name for child in children(home)]
    assert FAKE.name not in [status.name for status in channel_statuses(home)]
    assert stop_graces()[FAKE.name] == FAKE.stop_grace_s  # down stops it even then

    (home.home / MARKER).touch()
    [child] = [child for child in children(home) if child.name == FAKE.name]
    assert child.launch() == [sys.executable, "-m", "tests.workers.fake_channel"]
    assert child.log_file == log_file(home, FAKE.name)
    assert child.stop_grace_s == FAKE.stop_grace_s
    [status] = [status for status in channel_statuses(home) if status.name == FAKE.name]
    assert not status.healthy and status.pid is None
    assert status.address == "fakechat://home"
    assert status.detail == "not running: run `persyn up`"


@pytest.mark.usefixtures("fake_registered")
async def test_the_supervisor_runs_a_registered_channel_status_reports_it_and_down_stops_it(
    home: Settings,
) -> None:
    (home.home / MARKER).touch()
    env = {
        **os.environ,
        "PERSYN_HOME": str(home.home),
        "PERSYN_EMBEDDED": "false",
        "PERSYN_WORKER_STANDBY": "false",
        "PERSYN_CODEC_ENABLED": "false",
    }
    supervisor_log = home.home / "supervisor.out"
    with supervisor_log.open("wb") as out:
        supervisor = await asyncio.to_thread(
            subprocess.Popen,
            [sys.executable, "-m", "tests.workers.supervise_with_fake_channel"],
            cwd=ROOT,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    try:
        await until(lambda: READING in _log(home), timeout=30)
        pid = pidfile.live_pid(pid_file(home, FAKE.name))
        assert pid is not None

        [status] = [status for status in channel_statuses(home) if status.name == FAKE.name]
        assert status.healthy and status.pid == pid
        assert status.detail == "reads the fake chat"

        await asyncio.to_thread(EmbeddedStack(home).down)
        await asyncio.to_thread(supervisor.wait, 30)
    finally:
        if supervisor.poll() is None:
            supervisor.kill()
            supervisor.wait()
    assert pidfile.record_of(pid) is None
    said = supervisor_log.read_text()
    assert f"{FAKE.name} started (pid {pid})" in said
    assert f"stopping {FAKE.name} (pid {pid})" in said
    assert "supervisor stopped" in said
    assert STOPPED in _log(home)  # asked to stop, not killed
    assert not pid_file(home, FAKE.name).exists()


@pytest.mark.usefixtures("fake_registered")
def test_down_stops_a_registered_channel_a_killed_supervisor_left(home: Settings) -> None:
    home.run_dir.mkdir(mode=0o700)
    orphan = subprocess.Popen(
        FAKE.command(), cwd=ROOT, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, text=True
    )
    try:
        assert orphan.stdout is not None
        assert orphan.stdout.readline().strip() == READING  # its stop handler is in place
        assert pidfile.write(pid_file(home, FAKE.name), orphan.pid) is not None

        EmbeddedStack(home).down()

        orphan.wait(10)
        assert orphan.stdout.read().strip() == STOPPED  # asked to stop, not killed
    finally:
        if orphan.poll() is None:
            orphan.kill()
            orphan.wait()
        assert orphan.stdout is not None
        orphan.stdout.close()
    assert not pid_file(home, FAKE.name).exists()


def _log(settings: Settings) -> str:
    path = log_file(settings, FAKE.name)
    return path.read_text() if path.exists() else ""
