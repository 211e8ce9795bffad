"""What the supervisor tells others: ``run/supervisor.json``, rewritten on every change.

``persyn up`` reads it to tell a worker that failed on its own (say why, now) from one being
restarted (wait); ``persyn status`` shows each child's restarts and the last cause.
"""

from __future__ import annotations

import signal
from datetime import datetime
from pathlib import Path

from pydantic import BaseModel, Field

from schemas.settings import Settings
from workers import pidfile
from workers.process import SUPERVISOR, pid_file


class ChildState(BaseModel):
    """One child as ``persyn up`` and ``persyn status`` read it."""

    name: str
    pid: int | None = None
    starts: int = 0
    last_exit: str | None = None
    """How the last run ended ("exit 1", "SIGKILL"), if one did."""
    last_exit_code: int | None = None
    last_words: str | None = None
    """The last line the child logged before it exited."""
    exited_at: datetime | None = None
    restart_at: datetime | None = None
    error: str | None = None
    """Why the child cannot be started at all (nothing to retry until the setup changes)."""
    standby_pid: int | None = None
    """The worker's waiting spare, if one is ready to take over (:mod:`workers.standby`)."""

    @property
    def restarts(self) -> int:
        """How many times the child was started again."""
        return max(0, self.starts - 1)


class SupervisorState(BaseModel):
    """What the supervisor writes to ``run/supervisor.json`` on every change."""

    pid: int
    children: dict[str, ChildState] = Field(default_factory=dict)


def state_file(settings: Settings) -> Path:
    """Where the supervisor describes its children."""
    return settings.run_dir / "supervisor.json"


def read_state(settings: Settings) -> SupervisorState | None:
    """The state the running supervisor last wrote, or ``None`` if none runs."""
    try:
        state = SupervisorState.model_validate_json(state_file(settings).read_text())
    except (OSError, ValueError):
        return None
    record = pidfile.read(pid_file(settings, SUPERVISOR))
    if record is None or record.pid != state.pid or not pidfile.matches(record):
        return None
    return state


def describe_exit(code: int) -> str:
    """A child's return code in words."""
    if code < 0:
        try:
            return signal.Signals(-code).name
        except ValueError:
            return f"signal {-code}"
    return f"exit {code}"
