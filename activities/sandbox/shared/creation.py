"""Making a shared workspace: its volume first, its record after, or neither.

Shared by the operator's ``persyn workspace create`` and an agent's ``invite_to_workspace``.
An engine that does not answer leaves nothing recorded; a record that cannot be written takes
its fresh volume away again (unless a create of the same name won the race, whose volume it is).
"""

from __future__ import annotations

import contextlib
from collections.abc import Sequence

from activities.sandbox.provider import ExecutionProvider, SandboxError
from schemas.workspaces import Member
from store.db import Database
from store.queries import workspaces as store
from store.tables.columns import utcnow


class WorkspaceCreateError(Exception):
    """The workspace could not be made; nothing of it is recorded. One line."""


def volume_name(name: str) -> str:
    """The engine's volume of workspace ``name``."""
    return f"persyn-workspace-{name}"


async def create_workspace(
    db: Database,
    engine: ExecutionProvider,
    *,
    name: str,
    members: Sequence[Member],
    created_by: str,
) -> None:
    """Make the volume, then record the workspace and its first members.

    Raises:
        WorkspaceCreateError: The engine is away or refused, or the name is taken.
    """
    volume = volume_name(name)
    try:
        await engine.create_shared_volume(volume, workspace=name)
    except SandboxError as error:
        # The volume may be half made (created, not yet handed to the sandbox user).
        with contextlib.suppress(SandboxError):
            await engine.remove_shared_volume(volume)
        raise WorkspaceCreateError(
            f"cannot create workspace {name!r}: {error}; nothing was recorded"
        ) from None
    try:
        async with db.session() as session:
            await store.create_workspace(
                session,
                name=name,
                volume=volume,
                created_by=created_by,
                at=utcnow(),
                members=members,
            )
            await session.commit()
    except BaseException as error:
        async with db.autocommit() as session:
            taken = await store.get_workspace(session, name=name) is not None
        if not taken:
            with contextlib.suppress(SandboxError):
                await engine.remove_shared_volume(volume)
        if isinstance(error, store.WorkspaceExistsError) or taken:
            raise WorkspaceCreateError(
                f"workspace {name!r} exists already: pick another name"
            ) from None
        raise
