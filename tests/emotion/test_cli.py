"""``persyn agent show`` displays the agent's emotional state now and its recent trajectory."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner, Result

from cli import agent as agent_cli
from schemas.agents import AgentCreate
from schemas.emotion import EmotionReadingPublic
from schemas.ids import new_ulid
from schemas.memory import Emotion
from schemas.settings import get_settings
from store.db import Database
from store.embedded import EmbeddedPostgres
from store.queries.agents import create_agent
from store.queries.emotion import insert_reading
from tests.harness import unique

runner = CliRunner()


@pytest.fixture
def cli_env(
    postgres: EmbeddedPostgres, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[None]:
    monkeypatch.setenv("PERSYN_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("PERSYN_DATABASE_URL", postgres.dsn)
    get_settings.cache_clear()
    yield
    get_settings.cache_clear()


@pytest.fixture
async def db(postgres: EmbeddedPostgres) -> AsyncIterator[Database]:
    database = Database(postgres.dsn, pool_size=2)
    yield database
    await database.aclose()


async def invoke(args: list[str]) -> Result:
    app = typer.Typer()
    app.add_typer(agent_cli.app, name="agent")
    return await asyncio.to_thread(lambda: runner.invoke(app, args))


async def new_agent(db: Database) -> str:
    handle = unique("feel")
    async with db.session() as session:
        await create_agent(session, spec=AgentCreate(handle=handle, name="Feel", persona="Calm."))
    return handle


async def record(db: Database, agent: str, at: datetime, **distribution: float) -> None:
    shares = {e: distribution.get(e.value, 0.0) for e in Emotion}
    top = max(shares, key=lambda e: shares[e])
    reading = EmotionReadingPublic(
        id=new_ulid(),
        agent=agent,
        conversation_id=new_ulid(),
        channel_key="terminal:tty",
        activation_id=new_ulid(),
        at=at,
        top=top,
        probability=shares[top],
        distribution=shares,
    )
    async with db.session() as session:
        await insert_reading(session, reading=reading)


async def test_agent_show_displays_the_current_state_and_trajectory(
    cli_env: None, db: Database
) -> None:
    agent = await new_agent(db)
    fresh = await invoke(["agent", "show", agent])
    assert fresh.exit_code == 0, fresh.output
    assert "feeling:     neutral (1.00) (baseline: no readings yet)" in fresh.output

    now = datetime.now(UTC)
    await record(db, agent, now - timedelta(minutes=3), curious=0.8, neutral=0.2)
    await record(db, agent, now - timedelta(minutes=1), frustrated=0.9, neutral=0.1)
    shown = await invoke(["agent", "show", agent])
    assert shown.exit_code == 0, shown.output
    lines = shown.output.splitlines()
    [feeling] = [line for line in lines if line.startswith("feeling:")]
    assert feeling.startswith("feeling:     frustrated (0.89)")  # a minute of decay
    assert "decayed from frustrated 0.90" in feeling
    trajectory = [line.split()[2] for line in lines if line.startswith("  20")]
    assert trajectory == ["curious", "frustrated"]

    as_json = json.loads((await invoke(["agent", "show", agent, "--json"])).output)
    assert as_json["handle"] == agent
    assert as_json["emotion"]["state"]["top"] == "frustrated"
    assert [r["top"] for r in as_json["emotion"]["trajectory"]] == ["curious", "frustrated"]
