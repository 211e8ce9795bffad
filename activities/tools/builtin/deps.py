"""What the built-in tools are built from."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from temporalio.client import Client

from activities.gateway.gateway import ModelGateway
from activities.gateway.registry import ModelRegistry
from schemas.settings import Settings
from store.db import Database
from store.queries.agents import get_agent

if TYPE_CHECKING:
    from activities.tools.registry import ToolRegistry


@dataclass
class ToolDeps:
    """Shared dependencies of the built-in tools.

    ``client`` is the worker's Temporal client (reminder tools need it; without one they are
    not registered). ``registry`` is filled in once the registry exists, for self-inspection.
    """

    db: Database
    settings: Settings
    models: ModelRegistry
    client: Client | None = None
    gateway: ModelGateway | None = None
    """For tools that call a model themselves (``brief_on``)."""
    registry: ToolRegistry | None = field(default=None)

    async def timezone(self, agent: str) -> str:
        """The agent's IANA time zone (UTC when unknown)."""
        async with self.db.session() as session:
            found = await get_agent(session, handle=agent)
        return found.config.timezone if found else "UTC"

    async def agent_name(self, agent: str) -> str:
        """The agent's name (its handle when unknown)."""
        async with self.db.session() as session:
            found = await get_agent(session, handle=agent)
        return found.name if found else agent
