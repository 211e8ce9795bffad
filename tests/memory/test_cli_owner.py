"""``persyn memory show`` and ``forget`` take ``--agent`` like every other memory command."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner, Result

from cli import memory
from schemas.events import ChannelRef
from schemas.settings import get_settings
from store.db import Database
from store.embedded import EmbeddedPostgres
from store.queries import memory as records
from tests.memory.recall.records import add_channel, add_memory, new_agent

runner = CliRunner()


def persyn() -> typer.Typer:
    """The memory group mounted the way ``cli.main`` mounts it."""
    app = typer.Typer()
    app.add_typer(memory.app, name="memory")
    return app


@pytest.fixture
def cli_env(
    postgres: EmbeddedPostgres, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[None]:
    monkeypatch.setenv("PERSYN_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("PERSYN_DATABASE_URL", postgres.dsn)
    monkeypatch.setenv("PERSYN_ENCODER", "none")
    get_settings.cache_clear()
    yield
    get_settings.cache_clear()


async def invoke(args: list[str]) -> Result:
    """Run the CLI on a thread: its commands start their own event loop, as in a terminal."""
    return await asyncio.to_thread(lambda: runner.invoke(persyn(), args))


async def _memory_of(db: Database, summary: str) -> tuple[str, str]:
    agent = await new_agent(db, "owner")
    channel = await add_channel(db, agent, ChannelRef(service="terminal", channel="main"))
    return agent, await add_memory(db, agent=agent, channel_id=channel, summary=summary)


async def test_show_and_forget_accept_the_owning_agent(cli_env: None, db: Database) -> None:
    agent, record_id = await _memory_of(db, "I walked with Ada by the harbour.")

    shown = await invoke(["memory", "show", record_id, "--agent", agent])
    assert shown.exit_code == 0, shown.output
    assert "I walked with Ada by the harbour." in shown.output

    forgot = await invoke(["memory", "forget", record_id, "-a", agent, "--reason", "asked"])
    assert forgot.exit_code == 0, forgot.output
    assert forgot.output.startswith(f"forgot {record_id}")


async def test_another_agents_memory_is_refused_in_one_line_and_not_forgotten(
    cli_env: None, db: Database
) -> None:
    _, record_id = await _memory_of(db, "A secret kept on another agent's terminal.")
    stranger = await new_agent(db, "stranger")

    for command in ("show", "forget"):
        result = await invoke(["memory", command, record_id, "--agent", stranger])
        assert result.exit_code == 1
        lines = result.output.strip().splitlines()
        assert lines == [
            f"error: memory {record_id} is not one of {stranger}'s memories: "
            f"see `persyn memory list --agent {stranger}`"
        ]
    async with db.session() as session:
        found = await records.detail(session, record_id=record_id)
    assert found is not None and found.record.forgotten_at is None

    unknown = await invoke(["memory", "forget", record_id, "--agent", "nobody-here"])
    assert unknown.exit_code == 1
    assert unknown.output.strip() == (
        "error: there is no agent 'nobody-here': see `persyn agent list`"
    )
