"""``persyn usage`` prints the same report, character for character, after old records are
summed into daily totals by the maintenance purge."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import pytest
from typer.testing import CliRunner

from activities.memory.retention import RetentionActivities
from schemas.memory import MemorySettings
from schemas.memory_formation import PurgeInput
from schemas.settings import get_settings
from store.db import Database
from tests.harness import Stack, unique
from tests.observability.records import usage as record
from tests.observability.test_cli import app, store

runner = CliRunner()


@pytest.fixture
def settings_env(stack: Stack, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setenv("PERSYN_HOME", str(stack.home))
    monkeypatch.setenv("PERSYN_DATABASE_URL", stack.dsn)
    get_settings.cache_clear()
    yield
    get_settings.cache_clear()


def purge(dsn: str, agent: str) -> dict[str, int]:
    async def run() -> dict[str, int]:
        db = Database(dsn)
        try:
            activities = RetentionActivities(db, None, MemorySettings())
            result = await activities.purge(PurgeInput(agent=agent, now=datetime.now(UTC)))
        finally:
            await db.aclose()
        return result.run_records

    return asyncio.run(run())


def test_every_total_the_cli_prints_is_unchanged_by_the_rollup(
    stack: Stack, settings_env: None
) -> None:
    agent = unique("roll")[:32]
    today = datetime.now(UTC).replace(hour=0, minute=0, second=0, microsecond=0)
    records = [
        record(
            agent=agent,
            occurred_at=today - timedelta(days=40 + i % 20, hours=i % 24),
            stage=("respond", "critique", "rate")[i % 3],
            model=("big", "small")[i % 2],
            channel=("terminal:tty", "web:a", None)[i % 3],
            input_tokens=1000 + 7 * i,
            output_tokens=3 * i,
            cost_usd=None if i % 4 == 0 else i / 16,
        )
        for i in range(60)
    ]
    store(records, stack.dsn)
    since = f"{today - timedelta(days=90):%Y-%m-%d}"
    until = f"{today:%Y-%m-%d}"
    # A fixed --until: the report names its range, and "now" would move between the runs.
    span = ["usage", "--agent", agent, "--since", since, "--until", until]
    views = [
        span,
        [*span, "--by", "stage"],
        [*span, "--by", "model", "--by", "channel"],
        [*span, "--by", "tier", "--json"],
        [*span, "--channel", "web:a", "--by", "provider"],
    ]
    before = [runner.invoke(app(), view) for view in views]
    assert all(shown.exit_code == 0 for shown in before), [s.output for s in before]

    assert purge(stack.dsn, agent)["usage_records"] == 60

    after = [runner.invoke(app(), view).output for view in views]
    assert after == [shown.output for shown in before]
    # 60 records, 60 x 1000 + 7 x (0 + ... + 59) input tokens: the rows were all counted.
    assert before[0].output.splitlines()[-1].split()[:2] == ["60", "72,390"]
