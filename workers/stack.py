"""The embedded stack behind ``persyn up``/``down``/``status``.

Components, each idempotent to start and safe to stop: the Temporal dev server (SQLite file
under the Persyn home, Web UI on its port), PostgreSQL with pgvector (data under the home),
schema migrations, search-attribute registration, and the supervisor with its children: the
worker, the model server when some task runs on the local model, the codec endpoint and the
configured inbound channel processes (see :mod:`workers.supervisor`). With ``embedded=False``
only the migrations, the search attributes and the supervised processes are handled, against
the configured Temporal address and database URL.
"""

from __future__ import annotations

import asyncio
import subprocess
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from schemas.codec import get_codec_settings
from schemas.settings import Settings
from store.embedded import EmbeddedPostgres
from temporal import search_attributes
from temporal.client import connect
from temporal.codec_server import codec_endpoint
from temporal.devserver import DevServer, port_open
from workers import liveness, pidfile
from workers.health import (
    ComponentStatus,
    channel_statuses,
    codec_status,
    model_server_status,
)
from workers.model_server import model_server
from workers.process import (
    MODEL_SERVER,
    SUPERVISOR,
    TEMPORAL,
    WORKER,
    Started,
    last_line,
    live_pid,
    log_file,
    pid_file,
    start_supervisor,
)
from workers.server_health import database_status, temporal_and_worker_status, ui_status
from workers.supervisor import stop_graces
from workers.supervisor_state import ChildState, read_state, state_file

JUST_STARTED_GRACE_S = 20.0
"""How long ``up`` keeps trying an embedded Temporal it has just started before giving up."""

SERVER_CHECK_INTERVAL_S = 1.0
"""How often ``up`` checks, while the worker starts, that Temporal and PostgreSQL still run."""

SUPERVISOR_STOP_MARGIN_S = 10.0
"""How long ``down`` lets the supervisor take beyond its children's graces before it is killed."""

__all__ = ["ComponentStatus", "EmbeddedStack", "StackError"]


class StackError(RuntimeError):
    """A component failed to start or stop; the message says which and where to look."""


@dataclass
class EmbeddedStack:
    """The processes of one Persyn home."""

    settings: Settings

    # -- layout ---------------------------------------------------------------------------------

    @property
    def temporal_port(self) -> int:
        """The dev server's frontend port, from the configured address."""
        return int(self.settings.temporal_address.rsplit(":", 1)[1])

    def temporal(self) -> DevServer:
        """The dev server's launch description."""
        return DevServer(
            port=self.temporal_port,
            ui_port=self.settings.temporal_ui_port,
            db_file=self.settings.home / "temporal" / "temporal.db",
            log_file=self.settings.log_dir / "temporal.log",
            namespace=self.settings.temporal_namespace,
            ui_codec_endpoint=(
                codec_endpoint(self.settings) if get_codec_settings().enabled else None
            ),
        )

    def postgres(self) -> EmbeddedPostgres:
        """The embedded PostgreSQL."""
        return EmbeddedPostgres(
            data_dir=self.settings.home / "postgres",
            port=self.settings.postgres_port,
            log_file=self.settings.log_dir / "postgres.log",
            shared_buffers=self.settings.postgres_shared_buffers,
            password_path=self.settings.postgres_password_file,
        )

    def _pid_file(self, name: str) -> Path:
        return pid_file(self.settings, name)

    # -- up -------------------------------------------------------------------------------------

    def _temporal_running(self) -> bool:
        return live_pid(self.settings, TEMPORAL) is not None and port_open(self.temporal_port)

    def _start_temporal(self) -> None:
        if self._temporal_running():
            return
        process = self.temporal().start(detached=True)
        pidfile.write(self._pid_file(TEMPORAL), process.pid)

    def _start_postgres(self) -> None:
        self.postgres().start()

    def up(
        self, *, timeout: float = 60.0, supervisor: Started | None = None
    ) -> list[ComponentStatus]:
        """Start every component (skipping running ones) and wait until the worker serves.

        Args:
            timeout: How long the worker (and the model server) may take to serve.
            supervisor: The result of :func:`workers.process.start_supervisor` if the caller
                already called it (``persyn up`` does, before its own imports).

        Raises:
            StackError: A component did not come up.
        """
        began = datetime.now(UTC)
        # The supervisor and its worker start first: the worker's imports take longer than
        # Temporal and PostgreSQL take to start (in parallel, neither needs the other), and it
        # waits for both.
        process = (supervisor or start_supervisor(self.settings)).process
        try:
            if self.settings.embedded:
                with ThreadPoolExecutor(max_workers=2) as pool_:
                    futures = [
                        pool_.submit(self._start_temporal),
                        pool_.submit(self._start_postgres),
                    ]
                    for future in futures:
                        future.result()
            if process is None:
                # A fresh worker migrates and registers before it polls; a running one did so
                # when it started, but the code may have changed since. (Alembic loads here.)
                from store.migrate import upgrade

                upgrade(
                    self.settings.database_dsn(),
                    embedding_dimensions=self.settings.embedding_dimensions,
                )
                asyncio.run(self._register_search_attributes())
            self._wait_until_serving(process, began, timeout)
        except BaseException:
            if process is not None:  # what this command started has nothing to serve
                self._stop_supervised()
            raise
        return self.status()

    def _ready_within(self) -> float:
        # An embedded server this command just started may not serve yet; a remote one
        # that does not answer is reported at once.
        return JUST_STARTED_GRACE_S if self.settings.embedded else 0.0

    async def _register_search_attributes(self) -> None:
        client = await connect(self.settings, ready_within=self._ready_within())
        await search_attributes.register(client)

    def _wait_until_serving(
        self, process: subprocess.Popen[bytes] | None, began: datetime, timeout: float
    ) -> None:
        """Until the worker's beacon is fresh and the model server (if any) answers."""
        deadline = time.monotonic() + timeout
        next_check = time.monotonic() + SERVER_CHECK_INTERVAL_S
        while True:
            state = read_state(self.settings)
            if state is None:
                if process is None or process.poll() is not None:
                    log = log_file(self.settings, SUPERVISOR)
                    raise StackError(f"the supervisor is not running: see {log}")
            elif self._serving(state.children, began):
                return
            if self.settings.embedded and time.monotonic() >= next_check:
                self._check_servers_run()
                next_check = time.monotonic() + SERVER_CHECK_INTERVAL_S
            if time.monotonic() > deadline:
                name = MODEL_SERVER if liveness.alive(self.settings) else WORKER
                log = log_file(self.settings, name)
                raise StackError(
                    f"the {name} is not serving after {timeout:g}s "
                    f"(last logged: {last_line(log)}): see {log}"
                )
            time.sleep(0.05)

    def _check_servers_run(self) -> None:
        """Raise if the embedded Temporal or PostgreSQL stopped after it had started.

        Either may die after opening its port (a port of its own taken meanwhile, a full disk),
        and the worker would then wait for it in silence: name the one that stopped instead of
        blaming the worker a minute later.
        """
        postgres = self.postgres()
        for name, running, log in (
            ("Temporal", self._temporal_running(), log_file(self.settings, TEMPORAL)),
            ("PostgreSQL", postgres.running(), postgres.log_file),
        ):
            if not running:
                raise StackError(
                    f"{name} stopped while the worker was starting "
                    f"(last logged: {last_line(log)}): see {log}"
                )

    def _serving(self, children: dict[str, ChildState], began: datetime) -> bool:
        for child in children.values():
            if child.error:
                raise StackError(child.error)
            # A child that exits with an error of its own (not a signal) since this command
            # began will do so again: say why now instead of restarting it in the background.
            failed = child.last_exit_code is not None and child.last_exit_code > 0
            if failed and child.exited_at is not None and child.exited_at >= began:
                log = log_file(self.settings, child.name)
                raise StackError(f"the {child.name} exited ({child.last_words}): see {log}")
        if not liveness.alive(self.settings):
            return False
        return MODEL_SERVER not in children or model_server(self.settings).listening()

    # -- down -----------------------------------------------------------------------------------

    def _stop_supervised(self) -> None:
        """Stop the supervisor (it stops its children), and any child a killed one left."""
        graces = stop_graces()
        pidfile.stop_file(
            self._pid_file(SUPERVISOR), timeout=sum(graces.values()) + SUPERVISOR_STOP_MARGIN_S
        )
        for name, grace in graces.items():
            pidfile.stop_file(self._pid_file(name), timeout=grace)
        state_file(self.settings).unlink(missing_ok=True)

    def down(self) -> None:
        """Stop the supervised processes, then Temporal and PostgreSQL.

        The worker finishes its in-flight tasks first. Only processes whose records still match
        (see :mod:`workers.pidfile`) are signalled.
        """
        self._stop_supervised()
        if not self.settings.embedded:
            return
        pidfile.stop_file(self._pid_file(TEMPORAL), timeout=20)
        self.postgres().stop()

    # -- status ---------------------------------------------------------------------------------

    def status(self) -> list[ComponentStatus]:
        """Health, address and PID of every component."""
        components = asyncio.run(temporal_and_worker_status(self.settings))
        pid = self.postgres().pid() if self.settings.embedded else None
        components.insert(1, database_status(self.settings, pid))
        if self.settings.embedded:
            components.insert(1, ui_status(self.settings))
        server = model_server_status(self.settings)
        if server is not None:
            components.append(server)
        codec = codec_status(self.settings)
        if codec is not None:
            components.append(codec)
        components.extend(channel_statuses(self.settings))
        return components
