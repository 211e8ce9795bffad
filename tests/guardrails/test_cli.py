"""``persyn guardrails firings``: the operator's inbox of firings, with their evidence."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterator
from datetime import UTC, datetime

import pytest
from typer.testing import CliRunner

from cli.main import app
from schemas.agents import AgentCreate
from schemas.ids import new_ulid
from schemas.settings import get_settings
from store.db import Database
from store.queries.agents import create_agent
from store.queries.guardrails import record_firing
from store.tables.guardrails import GuardrailFiringRow
from tests.harness import Stack, unique

runner = CliRunner()


@pytest.fixture(autouse=True)
def deployment(stack: Stack, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setenv("PERSYN_HOME", str(stack.home))
    monkeypatch.setenv("PERSYN_DATABASE_URL", stack.dsn)
    get_settings.cache_clear()
    yield
    get_settings.cache_clear()


@pytest.fixture
async def fired(stack: Stack) -> AsyncIterator[tuple[str, GuardrailFiringRow]]:
    """An agent with one recorded firing."""
    db = Database(stack.dsn, pool_size=1)
    agent = unique("cli")
    row = GuardrailFiringRow(
        id=new_ulid(),
        agent=agent,
        rule_id="prompt-injection",
        actions=["notify"],
        evidence=[new_ulid()],
        summary="injection attempt in the message: override",
        person_id=new_ulid(),
        channel_key="terminal:tty",
        conversation_id=new_ulid(),
        activation_id=new_ulid(),
        blocking=False,
        fired_at=datetime.now(UTC),
    )
    try:
        async with db.session() as session:
            await create_agent(session, spec=AgentCreate(handle=agent, name="Cli", persona="A."))
        async with db.session() as session:
            await record_firing(session, row=row)
        yield agent, row
    finally:
        await db.aclose()


def test_firings_lists_the_rule_and_its_evidence(fired: tuple[str, GuardrailFiringRow]) -> None:
    agent, row = fired
    result = runner.invoke(app, ["guardrails", "firings", "--agent", agent])
    assert result.exit_code == 0, result.output
    assert f"{agent} prompt-injection [notify]" in result.stdout
    assert f"evidence: {row.evidence[0]}" in result.stdout
    assert f"activation {row.activation_id}" in result.stdout

    as_json = runner.invoke(app, ["guardrails", "firings", "--agent", agent, "--json"])
    (record,) = [json.loads(line) for line in as_json.stdout.splitlines()]
    assert (record["firing_id"], record["evidence"]) == (row.id, row.evidence)


def test_no_firings_and_a_bad_handle_say_so() -> None:
    quiet = runner.invoke(app, ["guardrails", "firings", "--agent", "nobody-here"])
    assert quiet.exit_code == 0 and "no guardrail firings for nobody-here" in quiet.stdout
    bad = runner.invoke(app, ["guardrails", "firings", "--agent", "Not A Handle"])
    assert bad.exit_code == 1
    (line,) = bad.stderr.splitlines()
    assert line.startswith("error: agent handle 'Not A Handle' is invalid")
