"""One tool server's session, held open for the worker's life and reopened when it drops.

The MCP SDK's transports are async context managers built on anyio task groups: they must be
entered and left by the same task, and a transport that loses its server cancels the task that
holds it. So each session lives in a task of its own (the *holder*), and calls made from
activity tasks watch it: a holder that ends means the connection is gone, never a cancelled
activity. A call that fails on a broken connection reconnects and is retried a bounded number
of times; after that the error is the tool's result.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
from typing import Any

import mcp_types
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp.shared.exceptions import MCPError

from schemas.mcp import McpServerConfig, McpSettings

log = logging.getLogger(__name__)

_CLOSE_GRACE_SECONDS = 3.0
"""How long a closing session may take to end its server process or HTTP session."""


class ServerUnavailableError(Exception):
    """The server could not be reached, refused us, or did not answer in time."""


class ConnectionLostError(Exception):
    """The session ended while a call was in flight."""


class ServerConnection:
    """A reconnecting session with one MCP server."""

    def __init__(self, config: McpServerConfig, settings: McpSettings) -> None:
        self.config = config
        self.settings = settings
        self._client: Client | None = None
        self._holder: asyncio.Task[None] | None = None
        self._stop = asyncio.Event()
        self._lock = asyncio.Lock()
        self._generation = 0
        self._refused: int | None = None
        self.reconnects = 0
        """How many times the session was reopened after it dropped."""

    @property
    def name(self) -> str:
        """The server's configured name."""
        return self.config.name

    async def connect(self) -> None:
        """Open the session (closing any old one) within the connect timeout.

        Raises:
            ServerUnavailableError: Unreachable, unauthenticated, or too slow; says which.
        """
        await self._close_holder()
        loop = asyncio.get_running_loop()
        ready: asyncio.Future[Client] = loop.create_future()
        self._stop = asyncio.Event()
        self._holder = asyncio.create_task(self._hold(ready, self._stop), name=f"mcp:{self.name}")
        timeout = self.settings.connect_timeout_seconds
        self._refused = None
        try:
            self._client = await asyncio.wait_for(asyncio.shield(ready), timeout)
        except TimeoutError:
            await self._close_holder(graceful=False)  # it never answered: nothing to end well
            raise ServerUnavailableError(f"no answer within {timeout:g} s") from None
        except ServerUnavailableError:
            if self._refused is not None:
                # The SDK reports every HTTP error status alike; the hook saw which it was.
                raise ServerUnavailableError(
                    f"refused: HTTP {self._refused} (check token_env and headers_from_env)"
                ) from None
            raise
        self._generation += 1

    async def list_tools(self) -> list[mcp_types.Tool]:
        """Every tool the server offers (all pages)."""
        client = self._connected()
        tools: list[mcp_types.Tool] = []
        cursor: str | None = None
        while True:
            page = await asyncio.wait_for(
                client.list_tools(cursor=cursor), self.settings.connect_timeout_seconds
            )
            tools.extend(page.tools)
            cursor = page.next_cursor
            if not cursor:
                return tools

    async def call(self, tool: str, arguments: dict[str, Any]) -> mcp_types.CallToolResult:
        """Call ``tool``, reconnecting and retrying when the connection is what failed.

        Raises:
            ServerUnavailableError: The connection failed on every attempt; says why.
            MCPError: The server answered with a protocol error (bad arguments, no such tool).
            TimeoutError: The call took longer than the call timeout (not retried: the tool
                may still be working, and running it twice could do its work twice).
        """
        attempts = self.settings.call_retries + 1
        problem = "not connected"
        for attempt in range(attempts):
            generation = self._generation
            try:
                if attempt or self._client is None or self._holder_done():
                    await self._reconnect(generation)
                return await self._call_once(tool, arguments)
            except (ServerUnavailableError, ConnectionLostError) as err:
                problem = str(err)
            except MCPError as err:
                if not _connection_error(err):
                    raise
                problem = err.message
            log.warning(
                "tool server %s: %s (attempt %d of %d)", self.name, problem, attempt + 1, attempts
            )
        raise ServerUnavailableError(
            f"tool server {self.name!r} is unreachable after {attempts} attempts: {problem}"
        )

    async def aclose(self) -> None:
        """End the session (and a stdio server's process)."""
        await self._close_holder()

    async def _call_once(self, tool: str, arguments: dict[str, Any]) -> mcp_types.CallToolResult:
        client, holder = self._connected(), self._holder
        assert holder is not None  # _connected() checked it
        timeout = self.settings.call_timeout_seconds
        call = asyncio.ensure_future(
            client.call_tool(tool, arguments, read_timeout_seconds=timeout)
        )
        done, _ = await asyncio.wait({call, holder}, timeout=timeout, return_when="FIRST_COMPLETED")
        if call in done:
            return call.result()
        call.cancel()
        with contextlib.suppress(BaseException):
            await call
        if holder in done:
            raise ConnectionLostError("the connection closed during the call")
        raise TimeoutError

    async def _reconnect(self, seen_generation: int) -> None:
        # Concurrent calls that saw the same broken session reconnect it once.
        async with self._lock:
            if self._generation != seen_generation and not self._holder_done():
                return
            await self.connect()
            self.reconnects += 1
            log.info("tool server %s: reconnected", self.name)

    def _connected(self) -> Client:
        if self._client is None or self._holder_done():
            raise ConnectionLostError("the connection is closed")
        return self._client

    def _holder_done(self) -> bool:
        return self._holder is None or self._holder.done()

    async def _hold(self, ready: asyncio.Future[Client], stop: asyncio.Event) -> None:
        try:
            async with Client(self._transport(), mode="auto") as client:
                ready.set_result(client)
                await stop.wait()
        except BaseException as err:  # the holder's end is its report; nothing awaits it
            reason = describe(err)
            if not ready.done():
                ready.set_exception(ServerUnavailableError(reason))
            else:
                log.warning("tool server %s: connection lost: %s", self.name, reason)
            if isinstance(err, KeyboardInterrupt | SystemExit):
                raise

    def _transport(self) -> Any:
        config = self.config
        if config.transport == "stdio":
            assert config.command is not None  # the settings checked it
            env = {**config.env, **{k: os.environ[k] for k in config.env_from if k in os.environ}}
            return StdioServerParameters(command=config.command, args=config.args, env=env)
        assert config.url is not None
        http = create_mcp_http_client(headers=request_headers(config))
        http.event_hooks["response"].append(self._note_refusal)
        return streamable_http_client(config.url, http_client=http)

    async def _note_refusal(self, response: Any) -> None:
        if response.status_code in (401, 403):
            self._refused = response.status_code

    async def _close_holder(self, *, graceful: bool = True) -> None:
        holder, self._holder, self._client = self._holder, None, None
        if holder is None:
            return
        self._stop.set()
        try:
            if not graceful:
                holder.cancel()
            await asyncio.wait_for(asyncio.shield(holder), _CLOSE_GRACE_SECONDS)
        except TimeoutError:
            holder.cancel()
            with contextlib.suppress(BaseException):
                await holder


def _connection_error(err: MCPError) -> bool:
    # A closed stream, or a restarted HTTP server that no longer knows our session (404).
    if err.code == mcp_types.CONNECTION_CLOSED:
        return True
    return err.code == mcp_types.INVALID_REQUEST and err.message == "Session terminated"


def request_headers(config: McpServerConfig) -> dict[str, str]:
    """HTTP headers for ``config``: literal ones, then those whose values the environment holds.

    Raises:
        ServerUnavailableError: A named environment variable is not set.
    """
    headers = dict(config.headers)
    for header, variable in config.headers_from_env.items():
        headers[header] = _from_env(variable)
    if config.token_env:
        headers["Authorization"] = f"Bearer {_from_env(config.token_env)}"
    return headers


def _from_env(variable: str) -> str:
    value = os.environ.get(variable)
    if not value:
        raise ServerUnavailableError(f"environment variable {variable} is not set")
    return value


def describe(err: BaseException) -> str:
    """One line for an error, looking inside the task groups anyio raises."""
    while isinstance(err, BaseExceptionGroup) and err.exceptions:
        err = err.exceptions[0]
    if isinstance(err, ServerUnavailableError):
        return str(err)
    status = getattr(getattr(err, "response", None), "status_code", None)
    if status in (401, 403):
        return f"refused: HTTP {status} (check the token or headers)"
    text = str(err).strip().splitlines()[0] if str(err).strip() else ""
    return f"{type(err).__name__}: {text}" if text else type(err).__name__
