"""``persyn workspace`` as an operator uses it, against the session's stack and Docker engine."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import docker
import pytest
from typer.testing import CliRunner

from cli.main import app
from schemas.agents import AgentCreate
from schemas.settings import get_settings
from store.db import Database
from store.queries.agents import create_agent
from tests.harness import Stack, unique
from tests.sandbox.engine import DockerEngine
from tests.workspaces.helpers import workspace_name

runner = CliRunner()


@pytest.fixture
def deployment(stack: Stack, docker_engine: DockerEngine, monkeypatch: pytest.MonkeyPatch) -> None:
    """The CLI's settings name the test's stack and engine."""
    monkeypatch.setenv("PERSYN_HOME", str(stack.home))
    monkeypatch.setenv("PERSYN_DATABASE_URL", stack.dsn)
    monkeypatch.setenv("PERSYN_TEMPORAL_ADDRESS", stack.temporal_address)
    monkeypatch.setenv("PERSYN_EMBEDDED", "false")
    monkeypatch.setenv("PERSYN_SANDBOX__DOCKER_HOST", docker_engine.host)
    monkeypatch.setenv("PERSYN_SANDBOX__IMAGE", docker_engine.image)
    get_settings.cache_clear()


def _agent(name: str) -> AgentCreate:
    # Handles sort as the names do: members are listed by handle.
    return AgentCreate(handle=unique(name.lower()), name=name, persona="A test agent.")


def cli(*args: str) -> Any:
    """``persyn workspace ARGS`` in a thread of its own (the CLI runs its own event loop)."""
    return asyncio.to_thread(runner.invoke, app, ["workspace", *args])


async def test_create_show_change_members_and_read_the_log(
    deployment: None, stack: Stack, docker_engine: DockerEngine
) -> None:
    db = Database(stack.dsn, pool_size=1)
    try:
        async with db.session() as session:
            ada = (await create_agent(session, spec=_agent("Ada"))).handle
            bo = (await create_agent(session, spec=_agent("Bo"))).handle
    finally:
        await db.aclose()
    ws = workspace_name()

    made = await cli("create", ws, "--member", f"{ada}:rw", "--member", f"{bo}:ro")
    assert made.exit_code == 0, made.output
    assert f"members:    {ada}:rw, {bo}:ro" in made.stdout
    engine = docker.DockerClient(base_url=docker_engine.host)
    try:
        volume = engine.volumes.get(f"persyn-workspace-{ws}")
        assert volume.attrs["Labels"] == {"persyn.workspace": ws}
    finally:
        engine.close()

    listed = await cli("list")
    assert f"{ws}" in listed.stdout and f"{ada}:rw, {bo}:ro" in listed.stdout
    changed = await cli("add-member", ws, f"{bo}:rw")
    assert f"members:    {ada}:rw, {bo}:rw" in changed.stdout
    removed = await cli("remove-member", ws, ada, "--json")
    assert json.loads(removed.stdout)["members"] == [{"agent": bo, "mode": "rw"}]
    again = await cli("remove-member", ws, ada)
    assert again.exit_code == 1
    assert again.stderr.strip() == f"error: '{ada}' is not a member of workspace '{ws}'"
    taken = await cli("create", ws)
    assert taken.stderr.strip() == f"error: workspace '{ws}' exists already: pick another name"
    unknown = await cli("create", workspace_name(), "--member", "nobody-here:rw")
    assert "there is no agent 'nobody-here'" in unknown.stderr

    log = await cli("log", ws)
    assert log.exit_code == 0 and log.stdout.strip() == "no changes yet"
    shown = await cli("show", ws, "--json")
    assert json.loads(shown.stdout)["created_by"] == "operator"
