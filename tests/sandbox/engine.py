"""A private Docker engine for the tests: its own socket, data and state under a temp dir.

Started with the flags that leave the host's network alone (no iptables, no bridge). Without
``dockerd`` the sandbox tests skip by name, unless ``PERSYN_REQUIRE_DOCKER=1`` (CI), which
makes a missing engine a failure.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import tempfile
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path

import docker
import pytest
from docker.errors import DockerException

from activities.sandbox.image import build_image
from tests.harness import until

TEST_IMAGE = "persyn-sandbox:test"
"""A busybox image: built in under a second, enough for every isolation check."""


@dataclass(frozen=True)
class DockerEngine:
    """A running engine the tests own."""

    host: str
    image: str
    runtimes: frozenset[str] = frozenset()
    """Runtimes besides runc: ``runsc`` when gVisor is installed."""


def missing(reason: str) -> None:
    """Skip (or, when CI requires the engine, fail) with ``reason``."""
    if os.environ.get("PERSYN_REQUIRE_DOCKER") == "1":
        pytest.fail(f"PERSYN_REQUIRE_DOCKER=1 but {reason}")
    pytest.skip(f"sandbox tests skipped: {reason}")


@asynccontextmanager
async def private_engine() -> AsyncIterator[DockerEngine]:
    """Start ``dockerd`` on its own socket, build the test image, stop it all afterwards."""
    binary = shutil.which("dockerd")
    if binary is None:
        missing("dockerd is not installed (apt-get install docker.io)")
    if shutil.which("busybox") is None:
        missing("busybox is not installed (apt-get install busybox-static)")
    # A short directory: the socket path must fit in a sockaddr_un (108 bytes).
    root = Path(tempfile.mkdtemp(prefix="pdk-", dir="/tmp"))
    host = f"unix://{root}/docker.sock"
    config = root / "daemon.json"
    config.write_text(json.dumps({"runtimes": _runtimes()}))
    with (root / "dockerd.log").open("wb") as log:
        process = await asyncio.create_subprocess_exec(
            str(binary),
            "--iptables=false",
            "--ip-forward=false",
            "--bridge=none",
            f"--data-root={root}/data",
            f"--exec-root={root}/exec",
            f"--pidfile={root}/dockerd.pid",
            f"--config-file={config}",
            f"-H={host}",
            stdout=log,
            stderr=asyncio.subprocess.STDOUT,
        )
    try:
        await until(lambda: _ready(host, process, root), timeout=30)
        await asyncio.to_thread(build_image, "busybox", TEST_IMAGE, docker_host=host)
        yield DockerEngine(host=host, image=TEST_IMAGE, runtimes=frozenset(_runtimes()))
    finally:
        if process.returncode is None:
            process.terminate()
            try:
                await asyncio.wait_for(process.wait(), timeout=20)
            except TimeoutError:
                process.kill()
                await process.wait()
        shutil.rmtree(root, ignore_errors=True)


def _runtimes() -> dict[str, dict[str, object]]:
    """gVisor, when installed; it must keep to its own network stack (see INFRA notes)."""
    runsc = shutil.which("runsc")
    if runsc is None:
        return {}
    return {"runsc": {"path": runsc, "runtimeArgs": ["--network=none"]}}


def _ready(host: str, process: asyncio.subprocess.Process, root: Path) -> bool:
    if process.returncode is not None:
        tail = (root / "dockerd.log").read_text(errors="replace").strip().splitlines()[-3:]
        missing(f"dockerd exited at start: {' | '.join(tail)}")
    try:
        client = docker.DockerClient(base_url=host, timeout=5)
    except DockerException:
        return False  # the SDK asks the engine its API version when it connects
    try:
        return bool(client.ping())
    except DockerException:
        return False
    finally:
        client.close()
