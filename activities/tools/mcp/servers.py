"""The worker's tool servers: connected at start, their tools registered, their state reported.

A server that is unreachable, refuses us or does not answer within the connect timeout is
logged in one line, reported with its reason, and contributes no tools: it never keeps the
worker from starting. Servers connect concurrently, so start-up waits at most one timeout.

What a server says about its tools is read by the injection detector
(:mod:`activities.tools.mcp.descriptions`). A server whose descriptions are flagged is reported
with what was found, and its tools are withheld (and not retried) unless its entry says
``allow_flagged_descriptions = true``; allowed, its tools are offered with its words capped and
fenced, like every server's.

A worker (``connect(..., retry=True)``) keeps trying such a server in the background, waiting
twice as long after each failure up to ``mcp.retry_max_seconds``; when it comes up its tools
are handed to every subscriber (the worker's tool registry), so they appear in the next
request to the model without a restart. ``persyn tools list`` probes once and never retries.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

from activities.tools.mcp.connection import ServerConnection
from activities.tools.mcp.connection import describe as describe_error
from activities.tools.mcp.descriptions import describe
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
    flagged: tuple[str, ...] = ()
    """What the injection detector found in its descriptions, one line per description."""

    @property
    def source(self) -> str:
        """Where its tools come from, as ``persyn tools list`` shows it."""
        return f"mcp:{self.name}"


NewTool = Callable[[Tool], None]
"""Called with each tool of a server that came up after the worker started."""


@dataclass
class ToolServers:
    """Connected tool servers and the tools they contribute."""

    statuses: list[ServerStatus] = field(default_factory=list)
    _tools: list[McpTool] = field(default_factory=list)
    _connections: list[ServerConnection] = field(default_factory=list)
    _taken: set[str] = field(default_factory=set)
    _subscribers: list[NewTool] = field(default_factory=list)
    _retrying: dict[str, asyncio.Task[None]] = field(default_factory=dict)

    @classmethod
    async def connect(cls, settings: McpSettings, *, retry: bool = False) -> ToolServers:
        """Connect every enabled server and list its tools; never raises for a server.

        Args:
            settings: The configured servers and timeouts.
            retry: Keep trying each server that failed, in the background, until it comes up
                or :meth:`aclose` (a worker); without it one attempt each (a probe).
        """
        servers = cls()
        enabled = settings.enabled()
        results = await asyncio.gather(*(_open(config, settings) for config in enabled))
        for config, (connection, status, tools) in zip(enabled, results, strict=True):
            if connection is not None:
                servers._admit(connection, tools)
                log.info("tool server %s: %d tools", config.name, len(status.tools))
            else:
                log.warning("tool server %s unavailable: %s", config.name, status.reason)
                if retry and not status.flagged:
                    servers._retrying[config.name] = asyncio.create_task(
                        servers._retry(config, settings), name=f"mcp-retry:{config.name}"
                    )
                    status = _retrying(status)
            servers.statuses.append(status)
        servers.statuses += [_disabled(config) for config in settings.servers if not config.enabled]
        return servers

    def tools(self) -> list[Tool]:
        """The registry tools of every reachable server."""
        return list(self._tools)

    def on_new_tool(self, listener: NewTool) -> None:
        """Call ``listener`` with each tool of every server that comes up from now on.

        Read :meth:`tools` and subscribe with no await between, so no server falls in the gap.
        """
        self._subscribers.append(listener)

    def _admit(self, connection: ServerConnection, tools: list[McpTool]) -> list[McpTool]:
        self._connections.append(connection)
        fresh = [tool for tool in tools if tool.name not in self._taken]
        self._taken.update(tool.name for tool in fresh)
        self._tools.extend(fresh)
        return fresh

    async def _retry(self, config: McpServerConfig, settings: McpSettings) -> None:
        attempts = 1
        for delay in backoff(settings.retry_initial_seconds, settings.retry_max_seconds):
            await asyncio.sleep(delay)
            attempts += 1
            connection, status, tools = await _open(config, settings)
            if connection is None and status.flagged:
                log.warning("tool server %s unavailable: %s", config.name, status.reason)
                self._set_status(status)
                self._retrying.pop(config.name, None)
                return
            if connection is None:
                log.debug("tool server %s still unavailable: %s", config.name, status.reason)
                self._set_status(_retrying(status))
                continue
            fresh = self._admit(connection, tools)
            self._set_status(status)
            log.warning(
                "tool server %s came up after %d attempts: %d tools added",
                config.name,
                attempts,
                len(fresh),
            )
            for listener in self._subscribers:
                for tool in fresh:
                    try:
                        listener(tool)
                    except Exception:  # one refusal must not keep the other tools out
                        log.exception(
                            "tool server %s: %s was not registered", config.name, tool.name
                        )
            self._retrying.pop(config.name, None)
            return

    def _set_status(self, status: ServerStatus) -> None:
        self.statuses = [status if s.name == status.name else s for s in self.statuses]

    def connection(self, name: str) -> ServerConnection | None:
        """The session with server ``name`` (tests and benchmarks)."""
        return next((c for c in self._connections if c.name == name), None)

    async def aclose(self) -> None:
        """Stop retrying, close every session and stop every stdio server."""
        retrying = list(self._retrying.values())
        self._retrying.clear()
        for task in retrying:
            task.cancel()
        for task in retrying:
            with contextlib.suppress(asyncio.CancelledError):
                await task
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
        return None, ServerStatus(config.name, available=False, reason=describe_error(err)), []
    admitted = [tool for tool in remote if config.admits(tool.name)]
    described = [describe(config.name, tool) for tool in admitted]
    flagged = tuple(flag for d in described for flag in d.flags)
    skipped = tuple(tool.name for tool in remote if not config.admits(tool.name))
    if flagged and not config.allow_flagged_descriptions:
        await connection.aclose()
        reason = (
            f"descriptions flagged as prompt injection ({_summary(flagged)}); its tools are "
            "withheld: set allow_flagged_descriptions = true in its persyn.toml entry to offer "
            "them anyway"
        )
        status = ServerStatus(config.name, available=False, reason=reason, flagged=flagged)
        return None, status, []
    tools = [mcp_tool(connection, t, d) for t, d in zip(admitted, described, strict=True)]
    status = ServerStatus(
        config.name,
        available=True,
        reason=f"descriptions flagged ({_summary(flagged)}); allowed" if flagged else None,
        tools=tuple(tool.name for tool in tools),
        skipped=skipped,
        flagged=flagged,
    )
    return connection, status, tools


def _summary(flags: tuple[str, ...], shown: int = 3) -> str:
    more = f"; and {len(flags) - shown} more" if len(flags) > shown else ""
    return "; ".join(flags[:shown]) + more


def backoff(initial: float, cap: float) -> Iterator[float]:
    """Waits between background attempts: doubling from ``initial``, never past ``cap``."""
    delay = min(initial, cap)
    while True:
        yield delay
        delay = min(delay * 2, cap)


def _retrying(status: ServerStatus) -> ServerStatus:
    return ServerStatus(
        status.name, available=False, reason=f"{status.reason}; retrying in the background"
    )


def _disabled(config: McpServerConfig) -> ServerStatus:
    return ServerStatus(
        config.name, available=False, reason="disabled in persyn.toml (set enabled = true)"
    )
