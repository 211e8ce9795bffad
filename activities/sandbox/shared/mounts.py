"""Each agent's shared workspaces as its sandbox mounts them: looked up before each use."""

from __future__ import annotations

from typing import TYPE_CHECKING

from schemas.workspaces import SHARED_DIR
from store.db import Database
from store.queries.workspaces import memberships

if TYPE_CHECKING:
    from activities.sandbox.docker import SharedMounts


def shared_mounts(db: Database) -> SharedMounts:
    """The execution provider's ``shared`` lookup: volume to ``/shared/{name}`` and its mode.

    Only the agent's own memberships are mounted, so a non-member's container has no path to
    the workspace at all.
    """

    async def lookup(agent: str) -> dict[str, dict[str, str]]:
        async with db.autocommit() as session:
            found = await memberships(session, agent=agent)
        return {
            volume: {"bind": f"{SHARED_DIR}/{name}", "mode": mode.value}
            for name, (volume, mode) in found.items()
        }

    return lookup
