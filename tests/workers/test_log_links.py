"""A link planted where the supervisor writes a log is never followed.

The supervisor may run as root; whoever can write in the logs directory could otherwise aim
its appends at any file on the machine (``logs/codec.log`` -> a root-only file).
"""

from __future__ import annotations

import stat
import sys
import time
from pathlib import Path

from schemas.settings import Settings
from workers.process import WORKER, log_file
from workers.supervisor import Child, Supervisor
from workers.supervisor_state import ChildState

SECRET = "root only\n"


def _victim(tmp_path: Path) -> Path:
    victim = tmp_path / "root-only"
    victim.write_text(SECRET)
    victim.chmod(0o600)
    return victim


def _supervisor(tmp_path: Path, *, last_exit: str | None) -> tuple[Supervisor, Child]:
    settings = Settings(home=tmp_path / "home", worker_standby=False)
    child = Child(
        name=WORKER,
        launch=lambda: [sys.executable, "-c", "print('a line for the log')"],
        log_file=log_file(settings, WORKER),
        state=ChildState(name=WORKER, last_exit=last_exit),
    )
    return Supervisor(settings, [child]), child


def test_a_link_at_a_restarted_childs_log_is_not_followed(tmp_path: Path) -> None:
    victim = _victim(tmp_path)
    supervisor, child = _supervisor(tmp_path, last_exit="SIGKILL")
    child.log_file.parent.mkdir(parents=True, exist_ok=True)
    child.log_file.symlink_to(victim)

    supervisor._start(child, time.monotonic())

    assert victim.read_text() == SECRET
    assert child.process is None
    assert child.state.error is not None and "symbolic link" in child.state.error
    assert child.log_file.is_symlink()


def test_a_childs_log_is_private_and_its_output_reaches_it(tmp_path: Path) -> None:
    supervisor, child = _supervisor(tmp_path, last_exit=None)

    supervisor._start(child, time.monotonic())
    assert child.process is not None and child.output is not None
    child.process.wait(10)
    child.output.close()

    assert "a line for the log" in child.log_file.read_text()
    assert stat.S_IMODE(child.log_file.stat().st_mode) == 0o600
    assert stat.S_IMODE(child.log_file.parent.stat().st_mode) == 0o700
