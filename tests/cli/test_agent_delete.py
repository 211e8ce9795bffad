"""``persyn agent delete`` as an operator runs it: it asks first, says what it erased and what
it kept, and names an agent that is not there in one line."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner, Result

from cli.agent import app
from schemas.agents import AgentCreate
from schemas.settings import get_settings
from store.db import Database
from store.queries.agents import create_agent, get_agent
from store.sql import execute
from tests.harness import Stack, unique

runner = CliRunner()


@pytest.fixture
def cli_env(stack: Stack, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setenv("PERSYN_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("PERSYN_DATABASE_URL", stack.dsn)
    monkeypatch.setenv("PERSYN_TEMPORAL_ADDRESS", stack.temporal_address)
    monkeypatch.setenv("PERSYN_SANDBOX__ENABLED", "false")
    get_settings.cache_clear()
    yield
    get_settings.cache_clear()


@pytest.fixture
async def db(stack: Stack) -> AsyncIterator[Database]:
    database = Database(stack.dsn, pool_size=2)
    yield database
    await database.aclose()


async def invoke(args: list[str], answer: str = "") -> Result:
    """Run the command on a thread: it starts its own event loop, as in a terminal."""
    return await asyncio.to_thread(lambda: runner.invoke(app, args, input=answer))


async def test_delete_asks_then_erases_and_records_who(cli_env: None, db: Database) -> None:
    handle = unique("cli-del")
    async with db.session() as session:
        await create_agent(session, spec=AgentCreate(handle=handle, name="Ada", persona="Kind."))

    declined = await invoke(["delete", handle], answer="n\n")
    async with db.session() as session:
        assert await get_agent(session, handle=handle) is not None
    assert declined.exit_code == 1 and "nothing deleted" in declined.output

    done = await invoke(["delete", handle, "--yes", "--by", "ops-lead"])

    assert done.exit_code == 0, done.output
    assert f"deleted {handle}:" in done.output and "audit: deleted by ops-lead" in done.output
    async with db.session() as session:
        assert await get_agent(session, handle=handle) is None
        by = await execute(
            session, "SELECT deleted_by FROM agent_deletions WHERE agent = :a", {"a": handle}
        )
        assert by.scalar_one() == "ops-lead"

    again = await invoke(["delete", handle, "--yes"])
    assert again.exit_code == 1
    assert f"there is no agent {handle!r}" in again.output
    assert "Traceback" not in again.output
