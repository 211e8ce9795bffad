"""Faults while a workspace is made: an engine that does not answer, or refuses half-way."""

from __future__ import annotations

from datetime import UTC, datetime

import docker
import pytest

from activities.sandbox.docker import DockerProvider
from activities.sandbox.shared.creation import volume_name
from activities.tools.builtin.deps import ToolDeps
from activities.tools.builtin.workspaces import InviteInput, InviteToWorkspace
from activities.tools.registry import ToolError, ToolRun
from schemas.agents import AgentCreate
from schemas.ids import new_ulid
from schemas.tools import ToolContext
from store.db import Database
from store.queries.agents import create_agent
from store.queries.workspaces import list_workspaces
from tests.harness import Stack, terminal, unique
from tests.sandbox.engine import DockerEngine
from tests.workspaces.helpers import workspace_name
from usecases import workspaces
from usecases.workspaces import WorkspaceError

NOWHERE = "unix:///nonexistent/persyn-test/docker.sock"


async def _agent(db: Database) -> str:
    spec = AgentCreate(handle=unique("agent"), name="Ws Test", persona="A test agent.")
    async with db.session() as session:
        return (await create_agent(session, spec=spec)).handle


async def _recorded(db: Database) -> set[str]:
    async with db.autocommit() as session:
        return {w.name for w in await list_workspaces(session)}


async def test_an_engine_that_does_not_answer_is_said_in_one_line_and_nothing_is_recorded(
    stack: Stack,
) -> None:
    offline = stack.settings(sandbox={"docker_host": NOWHERE})
    db = Database(stack.dsn, pool_size=2)
    try:
        ada, bo = await _agent(db), await _agent(db)
        name = workspace_name()
        with pytest.raises(WorkspaceError) as caught:
            await workspaces.create_workspace(
                settings=offline, name=name, members=[f"{ada}:rw", f"{bo}:ro"]
            )
        message = str(caught.value)
        assert "\n" not in message
        assert message.startswith(f"cannot create workspace '{name}': no Docker engine answers")
        assert message.endswith("nothing was recorded")
        assert name not in await _recorded(db)

        # An agent's invitation that would make the workspace fails the same way.
        tool = InviteToWorkspace(ToolDeps(db=db, settings=offline, models=None))  # type: ignore[arg-type]
        context = ToolContext(
            agent=ada,
            activation_id=new_ulid(),
            conversation_id=new_ulid(),
            channel=terminal(),
            person_id=new_ulid(),
        )
        with pytest.raises(ToolError, match="no Docker engine answers"):
            await tool.run(
                ToolRun(context=context, now=datetime.now(UTC), call_id=new_ulid()),
                InviteInput(workspace=name, agent=bo),
            )
        assert name not in await _recorded(db)
    finally:
        await db.aclose()


async def test_an_engine_refusing_half_way_leaves_no_volume_and_no_record(
    stack: Stack, docker_engine: DockerEngine
) -> None:
    # The engine answers, but the image that hands the new volume to the sandbox user is
    # missing: the volume was made, and must go again.
    broken = stack.settings(sandbox={"docker_host": docker_engine.host, "image": "no-such:image"})
    db = Database(stack.dsn, pool_size=2)
    name = workspace_name()
    try:
        ada = await _agent(db)
        with pytest.raises(WorkspaceError, match="nothing was recorded"):
            await workspaces.create_workspace(settings=broken, name=name, members=[f"{ada}:rw"])
        assert name not in await _recorded(db)
    finally:
        await db.aclose()
    engine = docker.DockerClient(base_url=docker_engine.host)
    try:
        volumes = [v.name for v in engine.volumes.list()]
    finally:
        engine.close()
    assert volume_name(name) not in volumes

    # With the engine whole, the same name is made, and made once.
    fine = stack.settings(sandbox={"docker_host": docker_engine.host, "image": docker_engine.image})
    made = await workspaces.create_workspace(settings=fine, name=name, members=[f"{ada}:rw"])
    assert made.name == name
    with pytest.raises(WorkspaceError, match="exists already"):
        await workspaces.create_workspace(settings=fine, name=name)
    await DockerProvider(fine.sandbox).remove_shared_volume(made.volume)
