"""The embedded stack behind ``persyn up``/``down``/``status``.

Components, each idempotent to start and safe to stop: the Temporal dev server (SQLite file
under the Persyn home, Web UI on its port), PostgreSQL with pgvector (data under the home),
schema migrations, search-attribute registration, and one worker process. With
``embedded=False`` only the migrations, the search attributes and the worker are handled, against
the configured Temporal address and database URL.
"""

from __future__ import annotations

import asyncio
import subprocess
import time
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from pydantic import BaseModel
from sqlalchemy import create_engine, pool, text
from temporalio.client import Client

from schemas.settings import Settings
from store.embedded import EmbeddedPostgres
from temporal import search_attributes
from temporal.client import connect
from temporal.devserver import DevServer, port_open
from temporal.inbox import has_pollers
from workers.process import Started, last_line, pid_file, read_pid, start_worker, stop_pid

JUST_STARTED_GRACE_S = 20.0
"""How long ``up`` keeps trying an embedded Temporal it has just started before giving up."""


class ComponentStatus(BaseModel):
    """One component's health as ``persyn status`` shows it."""

    name: str
    healthy: bool
    address: str
    pid: int | None = None
    detail: str = ""


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
        )

    def postgres(self) -> EmbeddedPostgres:
        """The embedded PostgreSQL."""
        return EmbeddedPostgres(
            data_dir=self.settings.home / "postgres",
            port=self.settings.postgres_port,
            log_file=self.settings.log_dir / "postgres.log",
            shared_buffers=self.settings.postgres_shared_buffers,
        )

    def _pid_file(self, name: str) -> Path:
        return pid_file(self.settings, name)

    # -- up -------------------------------------------------------------------------------------

    def _start_temporal(self) -> None:
        pid = read_pid(self._pid_file("temporal"))
        if pid is not None and port_open(self.temporal_port):
            return
        process = self.temporal().start(detached=True)
        self._pid_file("temporal").write_text(str(process.pid))

    def _start_postgres(self) -> None:
        self.postgres().start()

    def up(self, *, timeout: float = 60.0, worker: Started | None = None) -> list[ComponentStatus]:
        """Start every component (skipping running ones) and wait until the worker polls.

        Args:
            timeout: How long the worker may take to poll.
            worker: The result of :func:`workers.process.start_worker` if the caller already
                called it (``persyn up`` does, before its own imports).

        Raises:
            StackError: A component did not come up.
        """
        # The worker starts first: its imports take longer than Temporal and PostgreSQL take
        # to start (in parallel, neither needs the other), and it waits for both.
        process = (worker or start_worker(self.settings)).process
        if self.settings.embedded:
            try:
                with ThreadPoolExecutor(max_workers=2) as pool_:
                    futures = [
                        pool_.submit(self._start_temporal),
                        pool_.submit(self._start_postgres),
                    ]
                    for future in futures:
                        future.result()
            except BaseException:
                if process is not None:  # nothing for it to serve
                    stop_pid(process.pid, timeout=20)
                    self._pid_file("worker").unlink(missing_ok=True)
                raise
        if process is None:
            # A fresh worker migrates and registers before it polls; a running one did so when
            # it started, but the code may have changed since. (Alembic loads only for this.)
            from store.migrate import upgrade

            upgrade(
                self.settings.database_dsn(),
                embedding_dimensions=self.settings.embedding_dimensions,
            )
            asyncio.run(self._register_search_attributes())
        asyncio.run(self._wait_for_worker(process, timeout))
        return self.status()

    def _ready_within(self) -> float:
        # An embedded server this command just started may not serve yet; a remote one
        # that does not answer is reported at once.
        return JUST_STARTED_GRACE_S if self.settings.embedded else 0.0

    async def _register_search_attributes(self) -> None:
        client = await connect(self.settings, ready_within=self._ready_within())
        await search_attributes.register(client)

    async def _wait_for_worker(
        self, process: subprocess.Popen[bytes] | None, timeout: float
    ) -> None:
        client = await connect(self.settings, ready_within=self._ready_within())
        log = self.settings.log_dir / "worker.log"
        deadline = time.monotonic() + timeout
        while not await self._worker_polling(client):
            exited = (
                process.poll() is not None
                if process is not None
                else (read_pid(self._pid_file("worker")) is None)
            )
            if exited:
                self._pid_file("worker").unlink(missing_ok=True)
                raise StackError(f"the worker exited ({last_line(log)}): see {log}")
            if time.monotonic() > deadline:
                raise StackError(f"the worker is not polling after {timeout:g}s: see {log}")
            await asyncio.sleep(0.05)

    async def _worker_polling(self, client: Client) -> bool:
        return await has_pollers(client, self.settings.task_queue)

    # -- down -----------------------------------------------------------------------------------

    def down(self) -> None:
        """Stop the worker (letting in-flight tasks finish), then Temporal and PostgreSQL."""
        worker = read_pid(self._pid_file("worker"))
        if worker is not None:
            stop_pid(worker, timeout=20)
        self._pid_file("worker").unlink(missing_ok=True)
        if not self.settings.embedded:
            return
        temporal = read_pid(self._pid_file("temporal"))
        if temporal is not None:
            stop_pid(temporal, timeout=20)
        self._pid_file("temporal").unlink(missing_ok=True)
        self.postgres().stop()

    # -- status ---------------------------------------------------------------------------------

    def _database_status(self) -> ComponentStatus:
        dsn = self.settings.database_dsn()
        address = dsn.split("@", 1)[-1]
        pid = self.postgres().pid() if self.settings.embedded else None
        try:
            engine = create_engine(
                dsn, poolclass=pool.NullPool, connect_args={"connect_timeout": 2}
            )
            with engine.connect() as conn:
                version = conn.execute(
                    text("SELECT extversion FROM pg_extension WHERE extname = 'vector'")
                ).scalar()
            engine.dispose()
        except Exception as err:
            return ComponentStatus(
                name="postgres",
                healthy=False,
                address=address,
                pid=pid,
                detail=str(err).splitlines()[0][:120],
            )
        return ComponentStatus(
            name="postgres",
            healthy=True,
            address=address,
            pid=pid,
            detail=f"pgvector {version}" if version else "pgvector not installed",
        )

    def _ui_status(self) -> ComponentStatus:
        url = self.settings.ui_url
        try:
            with urllib.request.urlopen(url, timeout=2) as response:
                healthy = response.status == 200
        except OSError as err:
            return ComponentStatus(name="web-ui", healthy=False, address=url, detail=str(err)[:120])
        return ComponentStatus(name="web-ui", healthy=healthy, address=url)

    async def _temporal_and_worker(self) -> list[ComponentStatus]:
        address = self.settings.temporal_address
        pid = read_pid(self._pid_file("temporal")) if self.settings.embedded else None
        worker_pid = read_pid(self._pid_file("worker"))
        try:
            client = await connect(self.settings)
            polling = await self._worker_polling(client)
        except Exception as err:
            return [
                ComponentStatus(
                    name="temporal",
                    healthy=False,
                    address=address,
                    pid=pid,
                    detail=str(err).splitlines()[0][:120],
                ),
                ComponentStatus(
                    name="worker",
                    healthy=False,
                    address=self.settings.task_queue,
                    pid=worker_pid,
                    detail="Temporal unreachable",
                ),
            ]
        return [
            ComponentStatus(
                name="temporal",
                healthy=True,
                address=address,
                pid=pid,
                detail=f"namespace {self.settings.temporal_namespace}",
            ),
            ComponentStatus(
                name="worker",
                healthy=polling and (worker_pid is not None or not self.settings.embedded),
                address=f"task queue {self.settings.task_queue}",
                pid=worker_pid,
                detail="polling" if polling else "no poller on the task queue",
            ),
        ]

    def status(self) -> list[ComponentStatus]:
        """Health, address and PID of every component."""
        components = asyncio.run(self._temporal_and_worker())
        components.insert(1, self._database_status())
        if self.settings.embedded:
            components.insert(1, self._ui_status())
        return components
