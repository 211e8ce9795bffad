"""Shared workspaces: create them, change their members, read and write their change log.

Attribution holds a transaction-level advisory lock per workspace (:func:`lock_workspaces`)
from the snapshot before a sandbox step to the log rows written after it, so two members'
steps on one workspace never interleave and each change is put down to the agent that made it.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime

from sqlmodel import col, delete, select
from sqlmodel.ext.asyncio.session import AsyncSession

from schemas.workspaces import ChangeKind, Member, Mode, WorkspaceChange, WorkspacePublic
from store.lane import Lane, Row
from store.sql import execute
from store.tables.workspaces import WorkspaceChangeRow, WorkspaceMemberRow, WorkspaceRow


class WorkspaceExistsError(ValueError):
    """A workspace of that name exists already."""


async def missing_agents(session: AsyncSession, *, handles: Iterable[str]) -> list[str]:
    """Which of ``handles`` name no agent, in the order given."""
    wanted = list(dict.fromkeys(handles))
    if not wanted:
        return []
    rows = await execute(
        session, "SELECT handle FROM agents WHERE handle = ANY(:handles)", {"handles": wanted}
    )
    found = {row.handle for row in rows}
    return [handle for handle in wanted if handle not in found]


async def create_workspace(
    session: AsyncSession,
    *,
    name: str,
    volume: str,
    created_by: str,
    at: datetime,
    members: Sequence[Member],
) -> None:
    """Record a workspace and its first members (without committing).

    Raises:
        WorkspaceExistsError: The name is taken.
    """
    if await session.get(WorkspaceRow, name) is not None:
        raise WorkspaceExistsError(f"workspace {name!r} exists already: pick another name")
    session.add(WorkspaceRow(name=name, volume=volume, created_by=created_by, created_at=at))
    await session.flush()
    for member in members:
        await set_member(session, workspace=name, member=member, added_by=created_by, at=at)


async def count_created_by(session: AsyncSession, *, creator: str) -> int:
    """How many workspaces ``creator`` (an agent's handle, or ``operator``) has made."""
    row = await execute(
        session, "SELECT count(*) FROM workspaces WHERE created_by = :by", {"by": creator}
    )
    return int(row.scalar_one())


async def set_member(
    session: AsyncSession, *, workspace: str, member: Member, added_by: str, at: datetime
) -> None:
    """Add ``member`` to ``workspace``, or change its mode (without committing)."""
    await execute(
        session,
        "INSERT INTO workspace_members (workspace, agent, mode, added_by, added_at) "
        "VALUES (:workspace, :agent, :mode, :by, :at) "
        "ON CONFLICT (workspace, agent) DO UPDATE SET mode = EXCLUDED.mode",
        {
            "workspace": workspace,
            "agent": member.agent,
            "mode": member.mode.value,
            "by": added_by,
            "at": at,
        },
    )


async def remove_member(session: AsyncSession, *, workspace: str, agent: str) -> bool:
    """Take ``agent`` out of ``workspace`` (without committing); ``False`` if it was not in."""
    result = await session.exec(
        delete(WorkspaceMemberRow).where(
            col(WorkspaceMemberRow.workspace) == workspace, col(WorkspaceMemberRow.agent) == agent
        )
    )
    return bool(result.rowcount)


async def remove_all_members(session: AsyncSession, *, workspace: str) -> int:
    """Take every member out (without committing): no sandbox mounts it from then on."""
    result = await session.exec(
        delete(WorkspaceMemberRow).where(col(WorkspaceMemberRow.workspace) == workspace)
    )
    return int(result.rowcount or 0)


async def delete_workspace(session: AsyncSession, *, name: str) -> bool:
    """Delete the workspace's record with its members and change log (without committing)."""
    result = await session.exec(delete(WorkspaceRow).where(col(WorkspaceRow.name) == name))
    return bool(result.rowcount)


def _members(rows: Iterable[WorkspaceMemberRow]) -> list[Member]:
    return [Member(agent=r.agent, mode=Mode(r.mode)) for r in sorted(rows, key=lambda r: r.agent)]


async def get_workspace(session: AsyncSession, *, name: str) -> WorkspacePublic | None:
    """The workspace and its members, or ``None``."""
    row = await session.get(WorkspaceRow, name)
    if row is None:
        return None
    members = await session.exec(
        select(WorkspaceMemberRow).where(col(WorkspaceMemberRow.workspace) == name)
    )
    return WorkspacePublic(
        name=row.name,
        volume=row.volume,
        created_by=row.created_by,
        created_at=row.created_at,
        members=_members(members),
    )


async def list_workspaces(session: AsyncSession) -> list[WorkspacePublic]:
    """Every workspace with its members, by name."""
    rows = await session.exec(select(WorkspaceRow).order_by(col(WorkspaceRow.name)))
    members = list(await session.exec(select(WorkspaceMemberRow)))
    return [
        WorkspacePublic(
            name=row.name,
            volume=row.volume,
            created_by=row.created_by,
            created_at=row.created_at,
            members=_members(m for m in members if m.workspace == row.name),
        )
        for row in rows
    ]


async def memberships(session: AsyncSession, *, agent: str) -> dict[str, tuple[str, Mode]]:
    """``agent``'s workspaces: name to (volume, mode)."""
    rows = await execute(
        session,
        "SELECT w.name, w.volume, m.mode FROM workspace_members AS m "
        "JOIN workspaces AS w ON w.name = m.workspace WHERE m.agent = :agent ORDER BY w.name",
        {"agent": agent},
    )
    return {row.name: (row.volume, Mode(row.mode)) for row in rows}


@dataclass(frozen=True)
class AgentWorkspace:
    """One of an agent's workspaces, as its prompt names it.

    Attributes:
        mode: The agent's own mode in it.
        workspace: The workspace with every member.
        latest: Its newest change, if it has one.
    """

    mode: Mode
    workspace: WorkspacePublic
    latest: WorkspaceChange | None


# One statement on the driver lane in place of the session's 1 + 3 per workspace: every prompt
# lists the agent's workspaces. The members and newest change are looked up for the first
# ``limit`` workspaces only; ``total`` counts them all.
_AGENT_WORKSPACES = """
    WITH mine AS (
        SELECT w.name, w.volume, w.created_by, w.created_at, m.mode,
               count(*) OVER () AS total
          FROM workspace_members AS m
          JOIN workspaces AS w ON w.name = m.workspace
         WHERE m.agent = %(agent)s
         ORDER BY w.name
         LIMIT %(limit)s::integer
    )
    SELECT mine.*,
           (SELECT json_agg(json_build_object('agent', o.agent, 'mode', o.mode))
              FROM workspace_members AS o
             WHERE o.workspace = mine.name) AS members,
           c.id AS change_id, c.agent AS change_agent, c.path AS change_path,
           c.kind AS change_kind, c.bytes_before, c.bytes_after, c.lines_added,
           c.lines_removed, c.excerpt, c.task_id, c.at AS change_at
      FROM mine
      LEFT JOIN LATERAL (
            SELECT *
              FROM workspace_changes AS c
             WHERE c.workspace = mine.name
             ORDER BY c.at DESC, c.id DESC
             LIMIT 1
      ) AS c ON true
     ORDER BY mine.name
"""


async def agent_workspaces_on(
    lane: Lane, *, agent: str, limit: int
) -> tuple[list[AgentWorkspace], int]:
    """``agent``'s first ``limit`` (at least 1) workspaces by name, and how many it has in all.

    What :func:`memberships`, :func:`get_workspace` and :func:`list_changes` (``limit=1``) read
    for each, in one statement on the driver lane.
    """
    rows = await lane.rows(_AGENT_WORKSPACES, {"agent": agent, "limit": limit})
    found = [
        AgentWorkspace(
            mode=Mode(row["mode"]),
            workspace=WorkspacePublic(
                name=row["name"],
                volume=row["volume"],
                created_by=row["created_by"],
                created_at=row["created_at"],
                members=sorted(
                    (Member(agent=m["agent"], mode=Mode(m["mode"])) for m in row["members"] or []),
                    key=lambda m: m.agent,
                ),
            ),
            latest=_latest(row),
        )
        for row in rows
    ]
    return found, int(rows[0]["total"]) if rows else 0


def _latest(row: Row) -> WorkspaceChange | None:
    if row["change_id"] is None:
        return None
    return WorkspaceChange(
        id=row["change_id"],
        workspace=row["name"],
        agent=row["change_agent"],
        path=row["change_path"],
        kind=ChangeKind(row["change_kind"]),
        bytes_before=row["bytes_before"],
        bytes_after=row["bytes_after"],
        lines_added=row["lines_added"],
        lines_removed=row["lines_removed"],
        excerpt=row["excerpt"],
        task_id=row["task_id"],
        at=row["change_at"],
    )


async def lock_workspaces(session: AsyncSession, *, names: Iterable[str]) -> None:
    """Hold each workspace's attribution lock until the transaction ends (in name order)."""
    for name in sorted(set(names)):
        await execute(
            session, "SELECT pg_advisory_xact_lock(hashtext(:key))", {"key": f"workspace:{name}"}
        )


async def add_changes(session: AsyncSession, *, changes: Sequence[WorkspaceChange]) -> None:
    """Append change-log rows (without committing)."""
    for change in changes:
        session.add(WorkspaceChangeRow(**change.model_dump(mode="python")))
    await session.flush()


async def remembered_changes(session: AsyncSession, *, agent: str, tags: Sequence[str]) -> set[str]:
    """Which of ``tags`` the agent's memories already carry (changes it remembers seeing)."""
    if not tags:
        return set()
    rows = await execute(
        session,
        "SELECT DISTINCT seen.tag FROM memory_records, unnest(tags) AS seen(tag) "
        "WHERE agent = :agent AND tags && CAST(:tags AS varchar[]) AND seen.tag = ANY(:tags)",
        {"agent": agent, "tags": list(tags)},
    )
    return {str(row.tag) for row in rows}


async def list_changes(
    session: AsyncSession, *, workspace: str, limit: int = 50, agent: str | None = None
) -> list[WorkspaceChange]:
    """The newest ``limit`` changes of ``workspace`` (of ``agent`` only, if given), oldest first."""
    query = select(WorkspaceChangeRow).where(col(WorkspaceChangeRow.workspace) == workspace)
    if agent is not None:
        query = query.where(col(WorkspaceChangeRow.agent) == agent)
    rows = await session.exec(
        query.order_by(col(WorkspaceChangeRow.at).desc(), col(WorkspaceChangeRow.id).desc()).limit(
            limit
        )
    )
    return [
        WorkspaceChange(
            id=r.id,
            workspace=r.workspace,
            agent=r.agent,
            path=r.path,
            kind=ChangeKind(r.kind),
            bytes_before=r.bytes_before,
            bytes_after=r.bytes_after,
            lines_added=r.lines_added,
            lines_removed=r.lines_removed,
            excerpt=r.excerpt,
            task_id=r.task_id,
            at=r.at,
        )
        for r in reversed(list(rows))
    ]
