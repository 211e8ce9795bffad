"""The worker's tool servers: connected at start, their tools registered, their state reported.

A server that is unreachable, refuses us or does not answer within the connect timeout is
logged in one line, reported with its reason, and contributes no tools: it never keeps the
worker from starting. Servers connect concurrently, so start-up waits at most one timeout.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass, field

from activities.tools.mcp.connection import ServerConnection, describe
from activities.tools.mcp.tools import McpTool, mcp_tool
from activities.tools.registry import Tool
from schemas.mcp import McpServerConfig, McpSettings

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class ServerStatus:
    """Whether one configured server's tools are available, and why not."""

    name: str
    available: bool
    reason: str | None = None
    """One line when unavailable: disabled, unreachable, refused, too slow."""
    tools: tuple[str, ...] = ()
    """Registry names of the tools it contributes."""
    skipped: tuple[str, ...] = ()
    """Its tools the allow and deny lists kept out."""

    @property
    def source(self) -> str:
        """Where its tools come from, as ``persyn tools list`` shows it."""
        return f"mcp:{self.name}"


@dataclass
class ToolServers:
    """Connected tool servers and the tools they contribute."""

    statuses: list[ServerStatus] = field(default_factory=list)
    _tools: list[McpTool] = field(default_factory=list)
    _connections: list[ServerConnection] = field(default_factory=list)

    @classmethod
    async def connect(cls, settings: McpSettings) -> ToolServers:
        """Connect every enabled server and list its tools; never raises for a server."""
        servers = cls()
        enabled = settings.enabled()
        results = await asyncio.gather(*(_open(config, settings) for config in enabled))
        taken: set[str] = set()
        for config, (connection, status, tools) in zip(enabled, results, strict=True):
            if connection is not None:
                servers._connections.append(connection)
            fresh = [tool for tool in tools if tool.name not in taken]
            taken.update(tool.name for tool in fresh)
            servers._tools.extend(fresh)
            servers.statuses.append(status)
            if not status.available:
                log.warning("tool server %s unavailable: %s", config.name, status.reason)
            else:
                log.info("tool server %s: %d tools", config.name, len(status.tools))
        servers.statuses += [_disabled(config) for config in settings.servers if not config.enabled]
        return servers

    def tools(self) -> list[Tool]:
        """The registry tools of every reachable server."""
        return list(self._tools)

    def connection(self, name: str) -> ServerConnection | None:
        """The session with server ``name`` (tests and benchmarks)."""
        return next((c for c in self._connections if c.name == name), None)

    async def aclose(self) -> None:
        """Close every session and stop every stdio server."""
        await asyncio.gather(*(c.aclose() for c in self._connections))
        self._connections.clear()


async def probe(settings: McpSettings) -> list[ServerStatus]:
    """Each configured server's availability, found by connecting briefly (for the CLI)."""
    servers = await ToolServers.connect(settings)
    try:
        return servers.statuses
    finally:
        await servers.aclose()


async def _open(
    config: McpServerConfig, settings: McpSettings
) -> tuple[ServerConnection | None, ServerStatus, list[McpTool]]:
    connection = ServerConnection(config, settings)
    try:
        await connection.connect()
        remote = await connection.list_tools()
    except Exception as err:  # any failure of one server leaves it out, and says why
        await connection.aclose()
        return None, ServerStatus(config.name, available=False, reason=describe(err)), []
    admitted = [tool for tool in remote if config.admits(tool.name)]
    tools = [mcp_tool(connection, tool) for tool in admitted]
    status = ServerStatus(
        config.name,
        available=True,
        tools=tuple(tool.name for tool in tools),
        skipped=tuple(tool.name for tool in remote if not config.admits(tool.name)),
    )
    return connection, status, tools


def _disabled(config: McpServerConfig) -> ServerStatus:
    return ServerStatus(
        config.name, available=False, reason="disabled in persyn.toml (set enabled = true)"
    )
