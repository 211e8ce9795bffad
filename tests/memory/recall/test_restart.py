"""Restart survival (spec §9): stop every process, start again, and the agent still remembers.

Runs Persyn's own embedded stack (Temporal dev server with its SQLite file, PostgreSQL, a worker
process) in a private home on free ports, exactly as ``persyn up`` and ``persyn down`` do.
"""

from __future__ import annotations

import asyncio
import gc
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from activities.memory.encoders.local import LocalEncoder
from schemas.agents import AgentCreate
from schemas.events import Outcome, Receipt
from schemas.settings import Settings
from store.db import Database
from store.queries.agents import create_agent
from temporal import inbox
from temporal.client import connect
from temporal.devserver import free_port, port_open
from tests.harness import event, terminal
from tests.memory.recall.turns import QUESTION, SUMMARY, remember_tomatoes, respond_prompt
from workers.stack import EmbeddedStack


@pytest.fixture
def home(monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    with tempfile.TemporaryDirectory(prefix="persyn-restart-") as path:
        # The embedded PostgreSQL may run as another user: it must reach its data directory.
        Path(path).chmod(0o755)
        # The worker process reads its settings from the environment it inherits.
        monkeypatch.setenv("PERSYN_HOME", path)
        monkeypatch.setenv("PERSYN_TEMPORAL_ADDRESS", f"127.0.0.1:{free_port()}")
        monkeypatch.setenv("PERSYN_TEMPORAL_UI_PORT", str(free_port()))
        monkeypatch.setenv("PERSYN_POSTGRES_PORT", str(free_port()))
        monkeypatch.setenv("PERSYN_PROVIDER", "scripted")
        monkeypatch.setenv("PERSYN_LOG_LEVEL", "WARNING")
        monkeypatch.delenv("PERSYN_DATABASE_URL", raising=False)
        yield Path(path)


async def ask(settings: Settings, agent: str, text: str) -> Receipt:
    client = await connect(settings)
    try:
        return await inbox.submit(
            client, handle=agent, event=event(text), task_queue=settings.task_queue
        )
    finally:
        del client
        gc.collect()


async def test_the_next_activation_after_a_full_restart_recalls_what_was_learned(
    home: Path, encoder: LocalEncoder
) -> None:
    settings = Settings()
    assert settings.embedded and settings.home == home
    stack = EmbeddedStack(settings)
    try:
        await asyncio.to_thread(stack.up)
        db = Database(settings.database_dsn(), pool_size=2)
        try:
            async with db.session() as session:
                await create_agent(
                    session,
                    spec=AgentCreate(handle="ada-friend", name="Pip", persona="A kind gardener."),
                )
            first = await ask(settings, "ada-friend", "Hello, I'm Ada!")
            assert first.marker is not None and first.marker.outcome is Outcome.SPOKE
            record = await remember_tomatoes(db, encoder, agent="ada-friend", channel=terminal())
        finally:
            await db.aclose()

        await asyncio.to_thread(stack.down)
        ports = [stack.temporal_port, settings.postgres_port]
        assert not any(port_open(port) for port in ports), "a server survived the stop"
        await asyncio.to_thread(stack.up)

        receipt = await ask(settings, "ada-friend", QUESTION)
        assert receipt.marker is not None and receipt.marker.outcome is Outcome.SPOKE
        db = Database(settings.database_dsn(), pool_size=2)
        try:
            prompt = await respond_prompt(db, receipt)
        finally:
            await db.aclose()
        assert SUMMARY in prompt.system and f"[{record} | strong | " in prompt.system
        assert prompt.extra["memory"]["records"][0]["id"] == record
    finally:
        await asyncio.to_thread(stack.down)
