"""The soak's private embedded stack: started with ``persyn up``, killed with SIGKILL, restarted.

Everything runs as an operator would run it: ``persyn up`` in a temporary ``PERSYN_HOME`` with
non-default ports starts Temporal, PostgreSQL and the supervised worker; a killed worker is
restarted by the supervisor, a killed Temporal server or PostgreSQL by running ``persyn up``
again.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path

from schemas.settings import Settings
from store.embedded import EmbeddedPostgres
from temporal.devserver import free_port
from workers.process import TEMPORAL, WORKER, live_pid
from workers.supervisor_state import read_state

PERSYN = [sys.executable, "-m", "cli.main"]

_STRIPPED = ("PERSYN_DATABASE_URL", "PERSYN_EMBEDDED", "PERSYN_SCRIPTED_SCRIPT", "PERSYN_PROVIDER")


class FaultKind(StrEnum):
    """What the soak kills."""

    WORKER = "worker"
    TEMPORAL = "temporal"
    POSTGRES = "postgres"


class StackUpError(RuntimeError):
    """``persyn up`` kept failing; the message carries its last words."""


@dataclass
class SoakStack:
    """One Persyn home under soak: its environment, settings and processes."""

    home: Path
    env: dict[str, str]
    settings: Settings
    up_runs: list[float] = field(default_factory=list)

    @classmethod
    def create(cls, home: Path, *, provider: str, extra_env: dict[str, str]) -> SoakStack:
        """Describe a stack in ``home`` on free ports (nothing starts yet)."""
        env = {k: v for k, v in os.environ.items() if k not in _STRIPPED}
        env.update(
            {
                "PERSYN_HOME": str(home),
                "PERSYN_TEMPORAL_ADDRESS": f"127.0.0.1:{free_port()}",
                "PERSYN_TEMPORAL_UI_PORT": str(free_port()),
                "PERSYN_POSTGRES_PORT": str(free_port()),
                "PERSYN_CODEC_PORT": str(free_port()),
                "PERSYN_LOCAL_MODEL_PORT": str(free_port()),
                "PERSYN_METRICS_PORT": "0",
                "PERSYN_PROVIDER": provider,
                "PERSYN_LOG_LEVEL": "WARNING",
                # A killed worker is back quickly; the soak measures recovery, not backoff.
                "PERSYN_SUPERVISOR_BACKOFF_SECONDS": "0.5",
                "PERSYN_SUPERVISOR_BACKOFF_MAX_SECONDS": "4",
                **extra_env,
            }
        )
        saved = dict(os.environ)
        try:
            # Settings read the environment: build them from exactly what the processes see.
            os.environ.clear()
            os.environ.update(env)
            settings = Settings()
        finally:
            os.environ.clear()
            os.environ.update(saved)
        return cls(home=home, env=env, settings=settings)

    def persyn(self, *args: str, timeout: float = 180) -> subprocess.CompletedProcess[str]:
        """Run one ``persyn`` command against this home."""
        return subprocess.run(
            [*PERSYN, *args],
            env=self.env,
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )

    def up(self, *, attempts: int = 6) -> float:
        """``persyn up`` until it succeeds, as an operator retries it; seconds it took.

        After a SIGKILL, PostgreSQL's orphaned backends may hold its shared memory for a moment,
        so the first attempt can fail: the operator runs it again.
        """
        began = time.monotonic()
        last = ""
        for _ in range(attempts):
            result = self.persyn("up")
            if result.returncode == 0:
                took = time.monotonic() - began
                self.up_runs.append(took)
                return took
            lines = (result.stderr or result.stdout).strip().splitlines()
            last = lines[-1] if lines else f"exit {result.returncode}"
            time.sleep(1.0)
        raise StackUpError(f"persyn up failed {attempts} times: {last}")

    def down(self) -> None:
        """``persyn down``; whatever it leaves running is killed."""
        self.persyn("down", timeout=240)

    def postgres(self) -> EmbeddedPostgres:
        """The embedded PostgreSQL as the stack describes it."""
        return EmbeddedPostgres(
            data_dir=self.settings.home / "postgres",
            port=self.settings.postgres_port,
            log_file=self.settings.log_dir / "postgres.log",
        )

    def pid(self, kind: FaultKind) -> int | None:
        """The PID of the process a fault of ``kind`` kills, if it runs."""
        if kind is FaultKind.WORKER:
            return live_pid(self.settings, WORKER)
        if kind is FaultKind.TEMPORAL:
            return live_pid(self.settings, TEMPORAL)
        return self.postgres().pid()

    def kill(self, kind: FaultKind) -> int | None:
        """SIGKILL the process of ``kind``; its PID, or None if it was not running."""
        pid = self.pid(kind)
        if pid is None:
            return None
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            return None
        return pid

    def restart_after(self, kind: FaultKind) -> None:
        """Bring back what a fault of ``kind`` killed, the way an operator would.

        The worker is the supervisor's to restart; Temporal and PostgreSQL come back with
        ``persyn up``.
        """
        if kind is FaultKind.WORKER:
            return
        self.up()

    def worker_rss_kib(self) -> tuple[int, int] | None:
        """The worker's PID and resident set size (KiB), if it runs."""
        pid = self.pid(FaultKind.WORKER)
        if pid is None:
            return None
        try:
            for line in Path(f"/proc/{pid}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    return pid, int(line.split()[1])
        except OSError:
            return None
        return None

    def supervisor_restarts(self) -> dict[str, int]:
        """Restarts per child, from the supervisor's state file (empty if unreadable)."""
        state = read_state(self.settings)
        if state is None:
            return {}
        return {name: child.restarts for name, child in state.children.items()}
