"""The integrator's edge as it runs in production: payloads sealed by the codec, read through
the codec endpoint.

The rest of the suite may run with the codec off; here every worker seals what it hands to
Temporal (the product default), and the codec endpoint runs as its own process, the one
``persyn up`` supervises (``python -m temporal.codec_server``). The ``temporal`` CLI reaches
it with ``--codec-endpoint``, as docs/integration.md tells integrators to.
"""

from __future__ import annotations

import gc
import os
import socket
import subprocess
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from temporalio.client import Client

from store.embedded import EmbeddedPostgres
from temporal import search_attributes
from temporal.client import connect
from temporal.codec_server import command
from temporal.devserver import free_port
from tests.harness import Stack
from tests.integration.edge import Edge


def _answers(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.5):
            return True
    except OSError:
        return False


@contextmanager
def codec_endpoint(stack: Stack) -> Iterator[str]:
    """The codec endpoint process for ``stack``'s deployment; its URL."""
    port = free_port()
    env = {
        **os.environ,
        "PERSYN_HOME": str(stack.home),
        "PERSYN_DATABASE_URL": stack.dsn,
        "PERSYN_EMBEDDED": "false",
        "PERSYN_CODEC_ENABLED": "true",
        "PERSYN_CODEC_PORT": str(port),
    }
    env.pop("PERSYN_CODEC_MASTER_KEY", None)  # the session's key file, as the workers use
    log = stack.home / f"codec-endpoint-{port}.log"
    with log.open("wb") as out:
        process = subprocess.Popen(command(), env=env, stdout=out, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 60
        while not _answers(port) and process.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)  # a sync fixture: nothing else runs meanwhile
        assert _answers(port), log.read_text(errors="replace")
        yield f"http://127.0.0.1:{port}"
    finally:
        process.terminate()
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(10)


@pytest.fixture(scope="session")
async def client(stack: Stack) -> AsyncIterator[Client]:
    """A client, and so every worker built from it, with the payload codec on."""
    connected = await connect(
        stack.settings(), address=stack.temporal_address, ready_within=20, codec=True
    )
    await search_attributes.register(connected)
    yield connected
    del connected
    gc.collect()


@pytest.fixture(scope="session")
def stack(temporal_address: str, postgres: EmbeddedPostgres, session_dir: Path) -> Iterator[Edge]:
    """The session's stack, and the codec endpoint for it."""
    home = session_dir / "home"
    home.mkdir(exist_ok=True)
    plain = Stack(temporal_address=temporal_address, dsn=postgres.dsn, home=home)
    with codec_endpoint(plain) as url:
        yield Edge(
            temporal_address=temporal_address, dsn=postgres.dsn, home=home, codec_endpoint=url
        )
