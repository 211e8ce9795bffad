"""Tool-server tools through a real worker: the scripted model calls one, the answer uses it."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from temporalio.client import Client

from activities.gateway.providers.scripted import (
    Script,
    ScriptedProvider,
    ScriptRule,
    ScriptToolCall,
)
from activities.tools.mcp import ToolServers
from schemas.events import Outcome
from schemas.models import ModelRequest, ProviderName
from temporal.devserver import free_port
from tests.autonomy.conftest import tool_calls
from tests.harness import Harness, Stack, close_dependencies, dependencies, unique, until
from tests.mcp.conftest import HttpServer, http_server, kill, pid_of, stdio_server
from workers.build import build_worker


@asynccontextmanager
async def mcp_worker(
    client: Client,
    stack: Stack,
    rules: list[ScriptRule],
    servers: list[dict[str, Any]],
    **limits: Any,
) -> AsyncIterator[Harness]:
    """A worker built as ``workers.main`` builds it: settings, then tool servers, then Worker."""
    mcp = {"servers": servers, "connect_timeout_seconds": 5, **limits}
    # The operator allows these servers' tools outright: a tool server's tool otherwise waits
    # for a person's approval (docs/approvals.md; tests/approvals has that wait).
    settings = stack.settings(mcp=mcp, approvals={"tools": {"mcp__*": "never"}})
    provider = ScriptedProvider(Script(rules=rules))
    deps = dependencies(settings, providers={ProviderName.SCRIPTED: provider}, dsn=stack.dsn)
    deps.tool_servers = await ToolServers.connect(settings.mcp, retry=True)
    queue = unique("tq")
    async with build_worker(client, deps, task_queue=queue) as worker:
        yield Harness(
            client=client, task_queue=queue, deps=deps, provider=provider, worker=worker, db=deps.db
        )
    await close_dependencies(deps)


def _offers(request: ModelRequest, name: str) -> bool:
    return name in {tool.name for tool in request.tools}


def calling(match: str, name: str, **arguments: Any) -> ScriptRule:
    """A rule: on ``match``, the model calls ``name``."""
    return ScriptRule(match=match, tool_calls=[ScriptToolCall(name=name, arguments=arguments)])


async def test_the_model_calls_a_tool_server_s_tool_through_a_real_worker(
    client: Client, stack: Stack
) -> None:
    rules = [
        ScriptRule(after_tool=True, reply="The server says: {tool}"),
        calling("add twenty and twenty-two", "mcp__demo__add", a=20, b=22),
    ]
    # An unreachable server beside it: reported, and the worker serves anyway.
    servers = [stdio_server(), http_server(free_port(), name="gone")]
    async with mcp_worker(client, stack, rules, servers) as harness:
        assert harness.deps.tool_servers is not None
        status = {s.name: s.available for s in harness.deps.tool_servers.statuses}
        assert status == {"demo": True, "gone": False}
        agent = await harness.create_agent()
        receipt = await harness.say(agent.handle, "Please add twenty and twenty-two.")

        marker = receipt.marker
        assert marker is not None and marker.outcome is Outcome.SPOKE
        assert marker.text is not None and "42" in marker.text
        [call] = await tool_calls(harness, str(marker.activation_id))
        assert (call.name, call.arguments, call.result, call.is_error) == (
            "mcp__demo__add",
            {"a": 20, "b": 22},
            "42",
            False,
        )


async def test_a_server_that_died_between_turns_answers_the_next_turn(
    client: Client, stack: Stack
) -> None:
    rules = [
        ScriptRule(after_tool=True, reply="Echoed: {tool}"),
        calling("first", "mcp__demo__echo", text="first"),
        calling("second", "mcp__demo__echo", text="second"),
    ]
    async with mcp_worker(client, stack, rules, [stdio_server()]) as harness:
        agent = await harness.create_agent()
        first = (await harness.say(agent.handle, "first")).marker
        assert first is not None
        [call] = await tool_calls(harness, str(first.activation_id))
        assert call.result is not None
        kill(pid_of(call.result))

        second = (await harness.say(agent.handle, "second")).marker
        assert second is not None and second.outcome is Outcome.SPOKE
        [call] = await tool_calls(harness, str(second.activation_id))
        assert not call.is_error and call.result is not None and call.result.startswith("second")


async def test_a_server_down_at_start_is_offered_to_the_model_once_it_comes_up(
    client: Client, stack: Stack
) -> None:
    rules = [
        ScriptRule(after_tool=True, reply="The late server says: {tool}"),
        calling("add forty and two", "mcp__late__add", a=40, b=2),
        ScriptRule(reply="No tools yet."),
    ]
    late = HttpServer(free_port())
    servers = [http_server(late.port, name="late")]
    limits = {"retry_initial_seconds": 0.2, "retry_max_seconds": 1.0}
    async with mcp_worker(client, stack, rules, servers, **limits) as harness:
        tool_servers = harness.deps.tool_servers
        assert tool_servers is not None and not tool_servers.statuses[0].available
        agent = await harness.create_agent()
        await harness.say(agent.handle, "Hello before the server is up.")
        before = list(harness.provider.requests)
        assert before and not any(_offers(r, "mcp__late__add") for r in before)

        try:
            await late.start()
            await until(lambda: tool_servers.statuses[0].available, timeout=15)
            receipt = await harness.say(agent.handle, "Please add forty and two.")
        finally:
            late.kill()

        marker = receipt.marker
        assert marker is not None and marker.text is not None
        assert marker.text.startswith("The late server says:") and "42" in marker.text
        after = harness.provider.requests[len(before) :]
        assert any(_offers(r, "mcp__late__add") for r in after)
        [call] = await tool_calls(harness, str(marker.activation_id))
        assert (call.name, call.result, call.is_error) == ("mcp__late__add", "42", False)
