"""The supervised stack through the ``persyn`` command, as a user runs it.

A private home on free ports: Temporal's dev server, PostgreSQL, and the supervisor with its
worker (scripted model). Killing the worker, the supervisor or Temporal must never leave a
command waiting in silence, and ``persyn up`` repairs the stack in one go.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from schemas.settings import Settings
from temporal.client import connect
from temporal.devserver import free_port
from temporal.inbox import has_pollers
from tests.harness import until
from workers import pidfile
from workers.process import SUPERVISOR, TEMPORAL, WORKER, pid_file
from workers.supervisor import backoff
from workers.supervisor_state import read_state

PERSYN = [sys.executable, "-m", "cli.main"]
BACKOFF_S = 3.0


@pytest.fixture(scope="module")
def home() -> Iterator[dict[str, str]]:
    # Not pytest's tmp_path: a concurrent pytest run prunes old base directories under it.
    with tempfile.TemporaryDirectory(prefix="persyn-supervised-") as path:
        # The embedded PostgreSQL may run as another user: it must reach its data directory.
        Path(path).chmod(0o755)
        yield from _stack(Path(path))


def _stack(root: Path) -> Iterator[dict[str, str]]:
    env = {
        **os.environ,
        "PERSYN_HOME": str(root),
        "PERSYN_TEMPORAL_ADDRESS": f"127.0.0.1:{free_port()}",
        "PERSYN_TEMPORAL_UI_PORT": str(free_port()),
        "PERSYN_POSTGRES_PORT": str(free_port()),
        "PERSYN_CODEC_PORT": str(free_port()),
        "PERSYN_PROVIDER": "scripted",
        # Long enough to see the worker down before the supervisor brings it back.
        "PERSYN_SUPERVISOR_BACKOFF_SECONDS": str(BACKOFF_S),
        # The worker's spare starts soon after each worker, so every kill below meets one.
        "PERSYN_WORKER_STANDBY_DELAY_SECONDS": "1",
    }
    for key in ("PERSYN_DATABASE_URL", "PERSYN_EMBEDDED"):
        env.pop(key, None)
    up = persyn(env, "up")
    assert up.returncode == 0, up.stderr + _log_tails(root)
    created = persyn(env, "agent", "create", "ada", "--name", "Ada", "--persona", "Curious.")
    assert created.returncode == 0, created.stderr
    yield env
    persyn(env, "down")


def _log_tails(root: Path, lines: int = 15) -> str:
    """The end of every log of the home: a failed start in CI leaves nothing else to read."""
    said = []
    for log in sorted((root / "logs").glob("*.log")):
        tail = log.read_text(errors="replace").splitlines()[-lines:]
        said.append(f"\n--- {log.name}\n" + "\n".join(tail))
    return "".join(said)


def persyn(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*PERSYN, *args], env=env, capture_output=True, text=True, timeout=180, check=False
    )


def settings_of(env: dict[str, str]) -> Settings:
    return Settings(
        home=Path(env["PERSYN_HOME"]),
        temporal_address=env["PERSYN_TEMPORAL_ADDRESS"],
        postgres_port=int(env["PERSYN_POSTGRES_PORT"]),
    )


def worker_status(env: dict[str, str]) -> dict[str, object]:
    status = persyn(env, "status", "--json")
    return next(c for c in json.loads(status.stdout)["components"] if c["name"] == "worker")


def pid_of(env: dict[str, str], name: str) -> int:
    record = pidfile.read(pid_file(settings_of(env), name))
    assert record is not None and pidfile.matches(record)
    return record.pid


def send(env: dict[str, str], text: str, *extra: str) -> subprocess.CompletedProcess[str]:
    return persyn(env, "send", "--agent", "ada", "--json", *extra, text)


def event_id_line(result: subprocess.CompletedProcess[str]) -> str:
    first = result.stderr.splitlines()[0]
    assert first.startswith("event-id ")
    return first.removeprefix("event-id ")


def test_the_backoff_doubles_up_to_its_ceiling() -> None:
    settings = Settings(supervisor_backoff_seconds=1, supervisor_backoff_max_seconds=10)
    assert [backoff(settings, n) for n in (1, 2, 3, 4, 5, 500)] == [1, 2, 4, 8, 10, 10]


async def test_a_killed_worker_is_restarted_and_serves_the_next_message(
    home: dict[str, str],
) -> None:
    first = await asyncio.to_thread(send, home, "before")
    assert first.returncode == 0, first.stderr
    old = pid_of(home, WORKER)
    assert (await asyncio.to_thread(worker_status, home))["pid"] == old
    # Without its spare (killed first), the supervisor starts the worker afresh and runs the
    # hand-off of the dead worker's runs as a process of its own.
    await until(lambda: spare_of(home) is not None)
    spare = spare_of(home)
    assert spare is not None
    os.kill(spare, signal.SIGKILL)

    os.kill(old, signal.SIGKILL)
    await until(lambda: pidfile.record_of(old) is None)

    # Temporal still lists the dead worker's pollers; status goes by the worker's own beacon.
    client = await connect(settings_of(home))
    assert await has_pollers(client, "persyn")
    down = await asyncio.to_thread(worker_status, home)
    assert down["healthy"] is False
    assert "SIGKILL" in str(down["detail"])

    up = await asyncio.to_thread(persyn, home, "up")  # at once: one `up` is enough
    assert up.returncode == 0, up.stdout + up.stderr
    new = pid_of(home, WORKER)
    assert new != old
    back = await asyncio.to_thread(worker_status, home)
    assert back["healthy"] is True and back["pid"] == new

    second = await asyncio.to_thread(send, home, "after")
    assert second.returncode == 0, second.stderr
    assert json.loads(second.stdout)["marker"]["text"] == "after"

    logs = Path(home["PERSYN_HOME"]) / "logs"
    supervisor_log = (logs / "supervisor.log").read_text()
    assert f"worker (pid {old}) died (SIGKILL)" in supervisor_log
    assert f"worker restarted (pid {new})" in supervisor_log
    assert "--- restarted by the supervisor after SIGKILL ---" in (logs / "worker.log").read_text()
    # The dead worker's runs went to the shared queue rather than wait on its sticky queue.
    handing = r"handed (\d+) open runs on task queue persyn"
    await until(lambda: re.search(handing, (logs / "supervisor.log").read_text()))
    handed = re.search(handing, (logs / "supervisor.log").read_text())
    assert handed is not None and int(handed[1]) >= 1


def spare_of(env: dict[str, str]) -> int | None:
    state = read_state(settings_of(env))
    return state.children[WORKER].standby_pid if state is not None else None


async def test_a_killed_worker_is_replaced_by_its_waiting_spare(home: dict[str, str]) -> None:
    await until(lambda: spare_of(home) is not None)
    spare, old = spare_of(home), pid_of(home, WORKER)
    assert spare is not None and spare != old
    status = await asyncio.to_thread(worker_status, home)
    assert f"spare ready (pid {spare})" in str(status["detail"])

    logs = Path(home["PERSYN_HOME"]) / "logs"
    handed_before = (logs / "worker.log").read_text().count("open runs on task queue persyn")
    os.kill(old, signal.SIGKILL)
    # The spare becomes the worker (after the backoff), and a new spare follows it.
    await until(lambda: pidfile.live_pid(pid_file(settings_of(home), WORKER)) == spare)
    reply = await asyncio.to_thread(send, home, "to the spare")
    assert reply.returncode == 0, reply.stderr
    assert json.loads(reply.stdout)["marker"]["text"] == "to the spare"
    await until(lambda: spare_of(home) not in (None, spare))

    assert f"worker restarted (pid {spare}), restart" in (logs / "supervisor.log").read_text()
    worker_log = (logs / "worker.log").read_text()
    assert f"spare worker promoted (pid {spare})" in worker_log
    # The spare handed the dead worker's runs to the shared queue before it was promoted.
    before_promotion = worker_log[: worker_log.index(f"spare worker promoted (pid {spare})")]
    assert handed_before + 1 == before_promotion.count("open runs on task queue persyn")


async def test_send_with_no_worker_says_so_and_the_same_event_id_replies_once(
    home: dict[str, str],
) -> None:
    settings = settings_of(home)
    supervisor = pidfile.read(pid_file(settings, SUPERVISOR))
    assert supervisor is not None
    await asyncio.to_thread(pidfile.stop, supervisor, timeout=60)

    refused = await asyncio.to_thread(send, home, "is anyone there?")
    assert refused.returncode == 1
    event_id = event_id_line(refused)
    assert refused.stderr.splitlines()[1:] == [
        "error: no worker is serving task queue 'persyn': run `persyn up`, "
        f"then resend with --event-id {event_id}"
    ]

    up = await asyncio.to_thread(persyn, home, "up")
    assert up.returncode == 0, up.stdout + up.stderr
    retried = await asyncio.to_thread(send, home, "is anyone there?", "--event-id", event_id)
    again = await asyncio.to_thread(send, home, "is anyone there?", "--event-id", event_id)
    assert retried.returncode == 0, retried.stderr
    assert json.loads(retried.stdout) == json.loads(again.stdout)
    assert json.loads(retried.stdout)["event_id"] == event_id


async def test_send_with_temporal_down_names_the_event_first_and_retries_it(
    home: dict[str, str],
) -> None:
    settings = settings_of(home)
    temporal = pidfile.read(pid_file(settings, TEMPORAL))
    assert temporal is not None
    await asyncio.to_thread(pidfile.stop, temporal, timeout=30)

    refused = await asyncio.to_thread(send, home, "hello?")
    assert refused.returncode == 1
    event_id = event_id_line(refused)
    error = refused.stderr.splitlines()[1:]
    assert len(error) == 1, refused.stderr  # one line, no traceback
    assert error[0].startswith(f"error: cannot reach Temporal at {settings.temporal_address}")
    assert error[0].endswith(f"then resend with --event-id {event_id}")

    # A send that starts while Temporal is away gets through once it is back.
    waiting = asyncio.create_task(asyncio.to_thread(send, home, "still there?"))
    up = await asyncio.to_thread(persyn, home, "up")
    assert up.returncode == 0, up.stdout + up.stderr
    through = await waiting
    assert through.returncode == 0, through.stderr
    assert json.loads(through.stdout)["marker"]["text"] == "still there?"


async def test_children_die_with_a_killed_supervisor_and_up_starts_them_again(
    home: dict[str, str],
) -> None:
    supervisor, worker = pid_of(home, SUPERVISOR), pid_of(home, WORKER)
    await until(lambda: spare_of(home) is not None)
    spare = spare_of(home)
    assert spare is not None

    os.kill(supervisor, signal.SIGKILL)
    # The kernel sends the orphaned worker SIGTERM; it finishes its tasks and leaves.
    await until(lambda: pidfile.record_of(worker) is None, timeout=30)
    await until(lambda: pidfile.record_of(spare) is None, timeout=30)  # the spare too

    up = await asyncio.to_thread(persyn, home, "up")
    assert up.returncode == 0, up.stdout + up.stderr
    assert pid_of(home, SUPERVISOR) != supervisor
    reply = await asyncio.to_thread(send, home, "new supervisor")
    assert reply.returncode == 0, reply.stderr


async def test_down_stops_everything_and_the_worker_log_stays_readable(
    home: dict[str, str],
) -> None:
    settings = settings_of(home)
    await until(lambda: spare_of(home) is not None)
    spare = spare_of(home)
    assert spare is not None
    pids = [pid_of(home, SUPERVISOR), pid_of(home, WORKER), spare]

    down = await asyncio.to_thread(persyn, home, "down")
    assert down.returncode == 0, down.stderr
    assert all(pidfile.record_of(pid) is None for pid in pids)
    assert not list(settings.run_dir.glob("*.pid"))

    worker_log = (settings.log_dir / "worker.log").read_text()
    assert "worker stopping" in worker_log
    assert "CancelledError" not in worker_log
    assert max(len(line) for line in worker_log.splitlines()) < 4000
