"""Helpers of the shared-workspace tests: a scripted sandbox model per objective, mounts seen."""

from __future__ import annotations

import json
from typing import Any

import docker

from activities.gateway.providers.scripted import ScriptRule, ScriptToolCall
from activities.sandbox.paths import resource_name
from schemas.settings import Settings
from tests.autonomy.conftest import tool_calls
from tests.harness import Harness, unique
from tests.sandbox.engine import DockerEngine
from usecases import workspaces


def step(objective: str, name: str, **arguments: Any) -> list[ScriptRule]:
    """The delegated model, given ``objective``: make one tool call, then report its result."""
    return [
        ScriptRule(task="sandbox", match=objective, after_tool=True, reply="Result: {tool}"),
        ScriptRule(
            task="sandbox",
            match=objective,
            after_tool=False,
            tool_calls=[ScriptToolCall(name=name, arguments=arguments)],
        ),
    ]


def workspace_name() -> str:
    """A fresh workspace name (names are global: each test takes its own)."""
    return unique("ws").lower().replace("_", "-")[:32].rstrip("-")


async def create(settings: Settings, name: str, *members: str) -> None:
    """Create workspace ``name`` with ``members`` (``handle:rw`` / ``handle:ro``)."""
    await workspaces.create_workspace(settings=settings, name=name, members=list(members))


def shared_mounts(engine: DockerEngine, agent: str) -> dict[str, str]:
    """The agent's container's mounts under /shared: destination to mode (``rw``/``ro``)."""
    client = docker.DockerClient(base_url=engine.host)
    try:
        container = client.containers.get(resource_name(agent))
        return {
            m["Destination"]: "rw" if m.get("RW") else "ro"
            for m in container.attrs["Mounts"]
            if m["Destination"].startswith("/shared/")
        }
    finally:
        client.close()


async def said_tools(harness: Harness, agent: str, text: str) -> list[dict[str, Any]]:
    """Say ``text`` to ``agent``; the results of the tools its turn called."""
    receipt = await harness.say(agent, text)
    assert receipt.marker is not None
    calls = await tool_calls(harness, str(receipt.marker.activation_id))
    return [json.loads(str(call.result)) for call in calls]
