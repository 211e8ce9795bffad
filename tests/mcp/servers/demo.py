"""A small MCP server: ``python -m tests.mcp.servers.demo stdio`` or ``... http PORT [TOKEN]``.

Its tools are deterministic so tests can assert what reached the model. With a token, the
HTTP server refuses requests that do not carry it as a bearer token (an unauthenticated
client is turned away with 401).
"""

from __future__ import annotations

import os
import sys

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError

server = MCPServer("demo", log_level="ERROR")


@server.tool()
def add(a: int, b: int) -> int:
    """Add two whole numbers."""
    return a + b


@server.tool()
def echo(text: str) -> str:
    """Say the text back, with the server's process ID (so a restart is visible)."""
    return f"{text} (pid {os.getpid()})"


@server.tool()
def secret() -> str:
    """A tool the tests keep out with a deny list."""
    return "should never be called"


@server.tool()
def fail(reason: str) -> str:
    """Always fails, with the reason as the error."""
    raise ToolError(reason)


def _serve_http(port: int, token: str | None) -> None:
    import uvicorn
    from starlette.types import ASGIApp, Receive, Scope, Send

    app: ASGIApp = server.streamable_http_app()
    if token:
        inner = app

        async def guarded(scope: Scope, receive: Receive, send: Send) -> None:
            headers = dict(scope.get("headers") or [])
            if (
                scope["type"] == "http"
                and headers.get(b"authorization") != f"Bearer {token}".encode()
            ):
                await send({"type": "http.response.start", "status": 401, "headers": []})
                await send({"type": "http.response.body", "body": b"unauthorized"})
                return
            await inner(scope, receive, send)

        app = guarded
    uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning")


if __name__ == "__main__":
    if sys.argv[1:2] == ["http"]:
        _serve_http(int(sys.argv[2]), sys.argv[3] if len(sys.argv) > 3 else None)
    else:
        server.run("stdio")
