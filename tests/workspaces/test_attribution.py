"""Attribution when a snapshot fails: the step runs, and nothing is put down to anyone wrongly."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from activities.sandbox.provider import ExecutionProvider, FileState, SandboxError
from activities.sandbox.shared.attribution import WorkspaceAttribution
from schemas.agents import AgentCreate
from schemas.sandbox import Availability, CommandResult, FileEntry
from schemas.workspaces import Member, Mode
from store.db import Database
from store.queries.agents import create_agent
from store.queries.workspaces import create_workspace, list_changes
from store.tables.columns import utcnow
from tests.harness import Stack, terminal, unique
from tests.workspaces.helpers import workspace_name


class Snapshots(ExecutionProvider):
    """A provider that only takes snapshots, from a script: a tree, or an error."""

    name = "scripted"

    def __init__(self, *taken: dict[str, FileState] | SandboxError) -> None:
        self._taken = list(taken)

    async def snapshot(self, agent: str, root: str) -> dict[str, FileState]:
        taken = self._taken.pop(0)
        if isinstance(taken, SandboxError):
            raise taken
        return taken

    async def check(self) -> Availability:
        raise NotImplementedError

    async def validate(self) -> None:
        raise NotImplementedError

    async def provision(self, agent: str) -> None:
        raise NotImplementedError

    async def run(
        self, agent: str, command: str, *, timeout_seconds: float | None = None
    ) -> CommandResult:
        raise NotImplementedError

    async def read_file(self, agent: str, path: str) -> bytes:
        raise NotImplementedError

    async def write_file(self, agent: str, path: str, content: bytes) -> int:
        raise NotImplementedError

    async def list_files(self, agent: str, path: str = ".") -> list[FileEntry]:
        raise NotImplementedError

    async def teardown(self, agent: str) -> None:
        raise NotImplementedError


@pytest.fixture
async def member(stack: Stack) -> AsyncIterator[tuple[Database, str, str]]:
    """A database, an agent, and a workspace it may write (recorded without an engine)."""
    db = Database(stack.dsn, pool_size=2)
    spec = AgentCreate(handle=unique("agent"), name="Ada", persona="A test agent.")
    name = workspace_name()
    async with db.session() as session:
        agent = (await create_agent(session, spec=spec)).handle
        await create_workspace(
            session,
            name=name,
            volume=f"persyn-workspace-{name}",
            created_by="operator",
            at=utcnow(),
            members=[Member(agent=agent, mode=Mode.READ_WRITE)],
        )
        await session.commit()
    yield db, agent, name
    await db.aclose()


async def _step() -> str:
    return "ran"


async def test_a_failed_snapshot_after_the_step_attributes_nothing(
    member: tuple[Database, str, str],
) -> None:
    db, agent, name = member
    before = {"essay.md": FileState("0" * 64, 10, b"0123456789")}
    attribution = WorkspaceAttribution(db, Snapshots(before, SandboxError("engine away")))
    assert await attribution.attributed(agent, _step, task_id=None, channel=terminal()) == "ran"
    async with db.autocommit() as session:
        # Not "essay.md deleted": an unseen tree is no evidence of a change.
        assert await list_changes(session, workspace=name) == []


async def test_a_change_seen_by_both_snapshots_is_recorded(
    member: tuple[Database, str, str],
) -> None:
    db, agent, name = member
    before = {"essay.md": FileState("0" * 64, 3, b"ab\n")}
    after = {"essay.md": FileState("1" * 64, 6, b"ab\ncd\n")}
    attribution = WorkspaceAttribution(db, Snapshots(before, after))
    await attribution.attributed(agent, _step, task_id=None, channel=None)
    async with db.autocommit() as session:
        [change] = await list_changes(session, workspace=name)
    assert (change.agent, change.kind.value, change.lines_added, change.excerpt) == (
        agent,
        "modified",
        1,
        "cd",
    )
