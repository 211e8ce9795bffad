"""Shared workspaces from the operator's side: create, list, show, change members, read the log.

A workspace is a volume of the sandbox engine that each member's sandbox mounts at
``/shared/{name}``, read-write or read-only. Creating one makes the volume first and records
it after (``activities/sandbox/shared/creation.py``), so an engine that does not answer leaves
nothing recorded. A membership change needs no engine: each
member's sandbox compares its mounts before every command and is made anew when they changed.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

from activities.sandbox.factory import build_provider
from activities.sandbox.provider import ExecutionProvider, SandboxError
from activities.sandbox.shared import creation
from schemas.settings import Settings
from schemas.workspaces import (
    InvalidWorkspaceError,
    Member,
    WorkspaceChange,
    WorkspacePublic,
    check_workspace_name,
    parse_member,
)
from store.db import Database
from store.queries import workspaces as store
from store.tables.columns import utcnow
from usecases.errors import UseCaseError
from usecases.store import open_store

log = logging.getLogger(__name__)

OPERATOR = "operator"
"""``created_by`` and ``added_by`` of what the operator does."""

MAX_LOG = 500
"""The most change-log rows one read returns."""


class WorkspaceError(UseCaseError):
    """A workspace request that cannot be done; the message says what to fix, in one line."""


def checked_name(name: str) -> str:
    """``name`` if valid.

    Raises:
        WorkspaceError: It is not (the message says how to spell one).
    """
    try:
        return check_workspace_name(name)
    except InvalidWorkspaceError as error:
        raise WorkspaceError(str(error)) from None


def checked_members(specs: Sequence[str]) -> list[Member]:
    """``handle:rw`` / ``handle:ro`` specs as members; one agent named twice is refused.

    Raises:
        WorkspaceError: A spec is malformed, or an agent is named twice.
    """
    members: dict[str, Member] = {}
    for spec in specs:
        try:
            member = parse_member(spec)
        except InvalidWorkspaceError as error:
            raise WorkspaceError(str(error)) from None
        if member.agent in members:
            raise WorkspaceError(f"member {member.agent!r} is named twice: give each agent once")
        members[member.agent] = member
    return list(members.values())


async def _require_agents(db: Database, handles: Sequence[str]) -> None:
    async with db.autocommit() as session:
        missing = await store.missing_agents(session, handles=handles)
    if missing:
        raise WorkspaceError(f"there is no agent {missing[0]!r}: create it first, or fix the name")


async def _require(db: Database, name: str) -> WorkspacePublic:
    async with db.autocommit() as session:
        found = await store.get_workspace(session, name=name)
    if found is None:
        raise WorkspaceError(f"there is no workspace {name!r}: `persyn workspace list` shows them")
    return found


async def create_workspace(
    *,
    settings: Settings,
    name: str,
    members: Sequence[str] = (),
    provider: ExecutionProvider | None = None,
) -> WorkspacePublic:
    """Make the workspace's volume, then record it with its first members.

    Raises:
        WorkspaceError: A bad name or member, a name taken, an unknown agent, the sandbox
            switched off, or the engine away or refusing; nothing is recorded then.
    """
    name = checked_name(name)
    wanted = checked_members(members)
    if not settings.sandbox.enabled:
        raise WorkspaceError("the sandbox is switched off (sandbox.enabled): turn it on first")
    async with open_store(settings, pool_size=2) as db:
        await _require_agents(db, [m.agent for m in wanted])
        async with db.autocommit() as session:
            if await store.get_workspace(session, name=name) is not None:
                raise WorkspaceError(f"workspace {name!r} exists already: pick another name")
        engine = provider or build_provider(settings.sandbox)
        try:
            return await _create(db, engine, name, wanted)
        finally:
            if provider is None:
                await engine.close()


async def _create(
    db: Database, engine: ExecutionProvider, name: str, members: list[Member]
) -> WorkspacePublic:
    try:
        await creation.create_workspace(db, engine, name=name, members=members, created_by=OPERATOR)
    except creation.WorkspaceCreateError as error:
        raise WorkspaceError(str(error)) from None
    return await _require(db, name)


async def list_workspaces(*, settings: Settings) -> list[WorkspacePublic]:
    """Every workspace with its members, by name."""
    async with open_store(settings, pool_size=1) as db, db.autocommit() as session:
        return await store.list_workspaces(session)


async def show_workspace(*, settings: Settings, name: str) -> WorkspacePublic:
    """One workspace and its members.

    Raises:
        WorkspaceError: A bad name, or no such workspace.
    """
    name = checked_name(name)
    async with open_store(settings, pool_size=1) as db:
        return await _require(db, name)


async def add_member(*, settings: Settings, name: str, member: str) -> WorkspacePublic:
    """Add an agent (``handle:rw`` or ``handle:ro``), or change its mode.

    It takes effect at the member's next sandbox command: its sandbox is made anew with the
    workspace mounted.

    Raises:
        WorkspaceError: A bad name or member, no such workspace, or no such agent.
    """
    name = checked_name(name)
    [wanted] = checked_members([member])
    async with open_store(settings, pool_size=1) as db:
        await _require(db, name)
        await _require_agents(db, [wanted.agent])
        async with db.session() as session:
            await store.set_member(
                session, workspace=name, member=wanted, added_by=OPERATOR, at=utcnow()
            )
            await session.commit()
        return await _require(db, name)


async def remove_member(*, settings: Settings, name: str, agent: str) -> WorkspacePublic:
    """Take an agent out; its sandbox loses the mount before its next command.

    Raises:
        WorkspaceError: A bad name, no such workspace, or the agent is not a member.
    """
    name = checked_name(name)
    [wanted] = checked_members([agent])
    async with open_store(settings, pool_size=1) as db:
        await _require(db, name)
        async with db.session() as session:
            removed = await store.remove_member(session, workspace=name, agent=wanted.agent)
            await session.commit()
        if not removed:
            raise WorkspaceError(f"{wanted.agent!r} is not a member of workspace {name!r}")
        return await _require(db, name)


async def delete_workspace(
    *, settings: Settings, name: str, provider: ExecutionProvider | None = None
) -> WorkspacePublic:
    """Delete the workspace: its members out, its volume and files gone, then its record and log.

    Members are taken out first, so no sandbox mounts it again while the volume goes; the
    containers that mount it are removed (each made anew at its agent's next command). With no
    engine answering, the members stay out and the record stays: running it again finishes.

    Raises:
        WorkspaceError: A bad name, no such workspace, or the engine away or refusing.
    """
    name = checked_name(name)
    async with open_store(settings, pool_size=2) as db:
        found = await _require(db, name)
        async with db.session() as session:
            await store.remove_all_members(session, workspace=name)
            await session.commit()
        engine = provider or build_provider(settings.sandbox)
        try:
            await engine.remove_shared_volume(found.volume)
        except SandboxError as error:
            raise WorkspaceError(
                f"workspace {name!r} not deleted: {error}; its members are out, run this again "
                "when the engine answers"
            ) from None
        finally:
            if provider is None:
                await engine.close()
        async with db.session() as session:
            await store.delete_workspace(session, name=name)
            await session.commit()
        return found


async def workspace_log(
    *, settings: Settings, name: str, limit: int = 50, agent: str | None = None
) -> list[WorkspaceChange]:
    """Who changed which file and when, oldest of the newest ``limit`` first.

    Raises:
        WorkspaceError: A bad name or limit, or no such workspace.
    """
    name = checked_name(name)
    if not 1 <= limit <= MAX_LOG:
        raise WorkspaceError(f"--limit must be between 1 and {MAX_LOG}")
    by = checked_members([agent])[0].agent if agent is not None else None
    async with open_store(settings, pool_size=1) as db:
        await _require(db, name)
        async with db.autocommit() as session:
            return await store.list_changes(session, workspace=name, limit=limit, agent=by)
