"""Real MCP servers for the tests: the demo server over stdio, or over HTTP on a free port."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ulid import ULID

from activities.tools.mcp import ToolServers
from activities.tools.registry import Tool, ToolRun
from schemas.mcp import McpSettings
from schemas.tools import ToolContext
from temporal.devserver import free_port
from tests.harness import terminal, until

ROOT = Path(__file__).resolve().parents[2]
SERVER = "tests.mcp.servers.demo"


def stdio_server(name: str = "demo", **extra: Any) -> dict[str, Any]:
    """Configuration of the demo server started over stdio."""
    return {
        "name": name,
        "enabled": True,
        "transport": "stdio",
        "command": sys.executable,
        "args": ["-m", SERVER, "stdio"],
        "env": {"PYTHONPATH": str(ROOT)},
        **extra,
    }


def http_server(port: int, name: str = "web", **extra: Any) -> dict[str, Any]:
    """Configuration of the demo server over streamable HTTP on ``port``."""
    url = f"http://127.0.0.1:{port}/mcp"
    return {"name": name, "enabled": True, "transport": "http", "url": url, **extra}


def settings(*servers: dict[str, Any], **limits: Any) -> McpSettings:
    """Tool-server settings with short timeouts, so failures show quickly."""
    values: dict[str, Any] = {"connect_timeout_seconds": 5, "call_timeout_seconds": 5}
    return McpSettings.model_validate({**values, **limits, "servers": list(servers)})


def _listening(port: int) -> bool:
    with socket.socket() as sock:
        return sock.connect_ex(("127.0.0.1", port)) == 0


class HttpServer:
    """The demo HTTP server in a child process, which a test may kill and start again."""

    def __init__(self, port: int, token: str | None = None) -> None:
        self.port = port
        self.token = token
        self._process: subprocess.Popen[bytes] | None = None

    async def start(self) -> None:
        """Start it and wait until it accepts connections."""
        args = [sys.executable, "-m", SERVER, "http", str(self.port)]
        # Popen returns as soon as the child exists; the wait for its port is the async part.
        self._process = subprocess.Popen(  # noqa: ASYNC220
            [*args, *([self.token] if self.token else [])], cwd=ROOT, stderr=subprocess.DEVNULL
        )
        await until(lambda: _listening(self.port), timeout=30)

    def kill(self) -> None:
        """Kill it outright, as a crash would."""
        if self._process is not None:
            self._process.send_signal(signal.SIGKILL)
            self._process.wait()
            self._process = None


@asynccontextmanager
async def running_http_server(token: str | None = None) -> AsyncIterator[HttpServer]:
    """The demo server on a free port, killed at the end."""
    server = HttpServer(free_port(), token)
    await server.start()
    try:
        yield server
    finally:
        server.kill()


@asynccontextmanager
async def connected(mcp: McpSettings) -> AsyncIterator[ToolServers]:
    """``mcp``'s servers connected as a worker connects them, closed at the end."""
    servers = await ToolServers.connect(mcp)
    try:
        yield servers
    finally:
        await servers.aclose()


def by_name(servers: ToolServers) -> dict[str, Tool]:
    """The servers' registry tools by name."""
    return {tool.name: tool for tool in servers.tools()}


async def call(tool: Tool, **arguments: Any) -> Any:
    """Run ``tool`` as the invoke activity would, with ``arguments`` checked by its model."""
    context = ToolContext(
        agent="tester",
        activation_id=str(ULID()),
        conversation_id=str(ULID()),
        channel=terminal(),
        person_id=str(ULID()),
    )
    run = ToolRun(context=context, now=datetime.now(UTC), call_id=str(ULID()))
    return await tool.run(run, tool.input_model.model_validate(arguments))


def pid_of(echoed: str) -> int:
    """The server process ID the demo's ``echo`` tool appends."""
    return int(echoed.rsplit("pid ", 1)[1].rstrip(")"))


def kill(pid: int) -> None:
    """Kill a server process outright."""
    os.kill(pid, signal.SIGKILL)
