"""Tool servers over MCP, against real servers the tests start over stdio and streamable HTTP."""

from __future__ import annotations

import time

import pytest

from activities.tools.registry import ToolError
from temporal.devserver import free_port
from tests.mcp.conftest import (
    by_name,
    call,
    connected,
    http_server,
    kill,
    pid_of,
    running_http_server,
    settings,
    stdio_server,
)


async def test_a_stdio_server_s_tools_are_registered_under_its_name_and_answer() -> None:
    async with connected(settings(stdio_server())) as servers:
        tools = by_name(servers)
        assert set(tools) == {
            "mcp__demo__add",
            "mcp__demo__echo",
            "mcp__demo__secret",
            "mcp__demo__fail",
        }
        spec = tools["mcp__demo__add"].spec()
        assert spec.input_schema["required"] == ["a", "b"]  # the server's own schema
        # The server's words, fenced as its own (tests/mcp/test_descriptions.py).
        assert spec.description.startswith('<material source="tool_server" from="tool server demo')
        assert "\nAdd two whole numbers.\n" in spec.description
        assert spec.output_schema is not None  # the server's, as it declared it
        assert await call(tools["mcp__demo__add"], a=2, b=40) == "42"
        [status] = servers.statuses
        assert status.available and status.source == "mcp:demo"


async def test_a_failing_tool_s_error_reaches_the_model_as_the_tool_s_result() -> None:
    async with connected(settings(stdio_server())) as servers:
        with pytest.raises(ToolError, match=r"^Error executing tool fail: broken$"):
            await call(by_name(servers)["mcp__demo__fail"], reason="broken")
        with pytest.raises(ToolError, match="Input should be a valid integer"):
            await call(by_name(servers)["mcp__demo__add"], a="two", b=[])


async def test_a_stdio_server_that_dies_is_started_again_by_the_next_call() -> None:
    async with connected(settings(stdio_server())) as servers:
        echo = by_name(servers)["mcp__demo__echo"]
        first = pid_of(await call(echo, text="one"))
        kill(first)
        second = await call(echo, text="two")
        assert second.startswith("two") and pid_of(second) != first
        connection = servers.connection("demo")
        assert connection is not None and connection.reconnects == 1


async def test_an_http_server_restarted_mid_conversation_answers_the_next_call() -> None:
    async with (
        running_http_server() as server,
        connected(settings(http_server(server.port))) as servers,
    ):
        echo = by_name(servers)["mcp__web__echo"]
        before = pid_of(await call(echo, text="before"))
        server.kill()
        await server.start()  # the same port
        after = await call(echo, text="after")
        assert after.startswith("after") and pid_of(after) != before


async def test_a_server_that_stays_down_gives_the_model_an_error_after_bounded_retries() -> None:
    async with running_http_server() as server:
        mcp = settings(http_server(server.port), call_retries=2, connect_timeout_seconds=2)
        async with connected(mcp) as servers:
            echo = by_name(servers)["mcp__web__echo"]
            await call(echo, text="up")
            server.kill()
            started = time.monotonic()
            with pytest.raises(ToolError, match="unreachable after 3 attempts"):
                await call(echo, text="down")
            assert time.monotonic() - started < 10


async def test_unreachable_servers_at_start_are_reported_and_contribute_nothing() -> None:
    mcp = settings(
        http_server(free_port(), name="gone"),
        stdio_server(name="nocmd", command="/nonexistent/mcp-server"),
        stdio_server(name="off", enabled=False),
        connect_timeout_seconds=3,
    )
    started = time.monotonic()
    async with connected(mcp) as servers:
        assert time.monotonic() - started < 5
        assert servers.tools() == []
        status = {s.name: s for s in servers.statuses}
        assert not status["gone"].available and "Connect" in (status["gone"].reason or "")
        assert not status["nocmd"].available and status["nocmd"].reason
        assert status["off"].reason == "disabled in persyn.toml (set enabled = true)"


async def test_a_server_that_never_answers_is_left_out_after_the_connect_timeout() -> None:
    mute = stdio_server(name="mute", command="sleep", args=["30"])
    started = time.monotonic()
    async with connected(settings(mute, connect_timeout_seconds=1)) as servers:
        assert time.monotonic() - started < 6  # the timeout, and a bounded wait to stop it
        [status] = servers.statuses
        assert (status.available, status.reason) == (False, "no answer within 1 s")
        assert servers.tools() == []


async def test_a_server_that_wants_a_token_refuses_us_without_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    async with running_http_server(token="s3cret") as server:
        async with connected(settings(http_server(server.port))) as servers:
            [status] = servers.statuses
            assert not status.available and status.reason == (
                "refused: HTTP 401 (check token_env and headers_from_env)"
            )
            assert servers.tools() == []
        monkeypatch.setenv("DEMO_MCP_TOKEN", "s3cret")
        mcp = settings(http_server(server.port, token_env="DEMO_MCP_TOKEN"))
        async with connected(mcp) as servers:
            assert await call(by_name(servers)["mcp__web__add"], a=1, b=1) == "2"


async def test_allow_and_deny_lists_choose_the_tools_deny_winning() -> None:
    server = stdio_server(allow=["add", "echo", "sec*"], deny=["secret"])
    async with connected(settings(server)) as servers:
        assert sorted(by_name(servers)) == ["mcp__demo__add", "mcp__demo__echo"]
        [status] = servers.statuses
        assert sorted(status.skipped) == ["fail", "secret"]
