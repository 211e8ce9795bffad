"""`persyn up` against an existing deployment: nothing embedded starts, only the worker."""

from __future__ import annotations

import asyncio
from pathlib import Path

import psutil
import pytest

from store.embedded import EmbeddedPostgres
from temporal.client import connect
from temporal.devserver import free_port
from temporal.inbox import has_pollers
from tests.harness import Stack, unique
from workers.stack import EmbeddedStack, StackError


async def test_up_connects_to_the_configured_temporal_and_database(
    stack: Stack, postgres: EmbeddedPostgres, tmp_path: Path
) -> None:
    await asyncio.to_thread(tmp_path.chmod, 0o755)
    settings = stack.settings(home=tmp_path, task_queue=unique("tq-existing"))
    assert settings.embedded is False
    deployment = EmbeddedStack(settings)

    components = await asyncio.to_thread(deployment.up)
    worker_pid = next(c.pid for c in components if c.name == "worker")
    assert worker_pid is not None
    try:
        by_name = {c.name: c for c in components}
        assert set(by_name) == {"temporal", "postgres", "worker"}  # no embedded web UI
        assert all(c.healthy for c in components), components
        assert by_name["temporal"].address == stack.temporal_address
        assert by_name["postgres"].pid is None  # not ours to manage
        # Nothing embedded was started under this home.
        assert not (tmp_path / "postgres").exists()
        assert not (tmp_path / "temporal").exists()
    finally:
        await asyncio.to_thread(deployment.down)

    # The worker is gone; the shared servers keep running: down stopped only what it started.
    assert not psutil.pid_exists(worker_pid)
    assert postgres.running()
    assert await has_pollers(await connect(settings), "nobody-polls-this") is False


async def test_up_says_why_the_worker_could_not_start(stack: Stack, tmp_path: Path) -> None:
    await asyncio.to_thread(tmp_path.chmod, 0o755)
    nowhere = f"postgresql://persyn@127.0.0.1:{free_port()}/persyn"
    settings = stack.settings(
        home=tmp_path,
        task_queue=unique("tq-broken"),
        database_url=nowhere,
        worker_startup_wait_seconds=1,
    )
    deployment = EmbeddedStack(settings)

    with pytest.raises(StackError, match=r"the worker exited \(.*(refused|connect).*\): see "):
        await asyncio.to_thread(deployment.up, timeout=60)
    await asyncio.to_thread(deployment.down)
