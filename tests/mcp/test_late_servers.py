"""A tool server down when the worker starts is tried again in the background, and its tools
join the registry when it comes up: no restart.

Real servers: the demo server over streamable HTTP, started only after the tool servers were
connected; and an HTTP server that stays down.
"""

from __future__ import annotations

from itertools import islice

from activities.tools.mcp import ToolServers
from activities.tools.mcp.servers import backoff
from activities.tools.registry import Tool
from temporal.devserver import free_port
from tests.harness import until
from tests.mcp.conftest import HttpServer, call, http_server, settings


def test_the_wait_between_attempts_doubles_and_stays_bounded() -> None:
    assert list(islice(backoff(1.0, 60.0), 9)) == [1, 2, 4, 8, 16, 32, 60, 60, 60]
    assert list(islice(backoff(5.0, 2.0), 3)) == [2, 2, 2]


async def test_a_server_started_late_contributes_its_tools_without_a_restart() -> None:
    late = HttpServer(free_port())
    mcp = settings(
        http_server(late.port, name="late"),
        connect_timeout_seconds=2,
        retry_initial_seconds=0.1,
        retry_max_seconds=0.5,
    )
    servers = await ToolServers.connect(mcp, retry=True)
    added: list[Tool] = []
    servers.on_new_tool(added.append)
    try:
        [status] = servers.statuses
        assert not status.available and servers.tools() == []
        assert (status.reason or "").endswith("; retrying in the background")

        await late.start()
        await until(lambda: servers.statuses[0].available, timeout=15)

        names = {tool.name for tool in added}
        assert "mcp__late__add" in names and names == {tool.name for tool in servers.tools()}
        add = next(tool for tool in added if tool.name == "mcp__late__add")
        assert await call(add, a=40, b=2) == "42"
        assert set(servers.statuses[0].tools) == names
    finally:
        await servers.aclose()
        late.kill()


async def test_a_probe_tries_once_and_closing_stops_the_retries() -> None:
    down = http_server(free_port(), name="down")
    probed = await ToolServers.connect(settings(down, connect_timeout_seconds=1))
    try:
        [status] = probed.statuses
        assert not status.available and "retrying" not in (status.reason or "")
    finally:
        await probed.aclose()

    retried = await ToolServers.connect(
        settings(down, connect_timeout_seconds=1, retry_initial_seconds=0.1), retry=True
    )
    [task] = retried._retrying.values()
    await retried.aclose()
    assert task.done() and task.cancelled()
