"""Workers whose model calls a tool that needs approval, and helpers to wait for the ask."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from pydantic import BaseModel
from temporalio.client import Client

from activities.gateway.providers.scripted import (
    Script,
    ScriptedProvider,
    ScriptRule,
    ScriptToolCall,
)
from activities.tools.registry import Tool, ToolInput, ToolRun
from schemas.approvals import PendingApproval
from schemas.events import Receipt
from schemas.models import ProviderName
from tests.harness import Harness, Stack, close_dependencies, dependencies, unique, until
from usecases.approvals import list_approvals
from workers.build import build_worker

BELL = "ring_bell"


class BellInput(ToolInput):
    """How loud."""

    loudness: int = 1


class Rung(BaseModel):
    """What the bell did."""

    rung: int


class Bell(Tool):
    """A tool that counts how many times it ran (every worker of a test shares one)."""

    name = BELL
    description = "Ring the bell."
    input_model = BellInput
    output_model = Rung

    def __init__(self) -> None:
        self.runs: list[str] = []

    async def run(self, call: ToolRun, args: BellInput) -> Rung:
        self.runs.append(call.call_id)
        return Rung(rung=len(self.runs))


RING = ScriptRule(
    task="respond",
    match="ring the bell",
    after_tool=False,
    tool_calls=[ScriptToolCall(name=BELL, arguments={"loudness": 3})],
)
AFTER_TOOL = ScriptRule(task="respond", after_tool=True, reply="The bell: {tool}")
RULES = [AFTER_TOOL, RING]
ASK_BELL = {"tools": {BELL: "always"}}
"""Approval settings under which every ring waits for a decision."""


@asynccontextmanager
async def approvals_worker(
    client: Client,
    stack: Stack,
    *,
    bell: Tool,
    approvals: dict[str, Any] | None = None,
    rules: list[ScriptRule] | None = None,
    task_queue: str | None = None,
    overrides: dict[str, Any] | None = None,
) -> AsyncIterator[Harness]:
    """A worker whose model rings ``bell`` when asked, under the approval settings given.

    ``bell`` is the one tool the test adds (a :class:`Bell`, or a stand-in of another name).

    ``overrides`` are further settings (the sandbox's network, skills, a Temporal address).
    """
    settings = stack.settings(
        approvals=ASK_BELL if approvals is None else approvals, **(overrides or {})
    )
    provider = ScriptedProvider(Script(rules=list(RULES if rules is None else rules)))
    deps = dependencies(settings, providers={ProviderName.SCRIPTED: provider}, dsn=stack.dsn)
    deps.extra_tools = [bell]
    queue = task_queue or unique("tq")
    async with build_worker(client, deps, task_queue=queue) as worker:
        yield Harness(
            client=client, task_queue=queue, deps=deps, provider=provider, worker=worker, db=deps.db
        )
    await close_dependencies(deps)


async def waiting(harness: Harness, agent: str, *, count: int = 1) -> list[PendingApproval]:
    """The agent's waiting approvals, once ``count`` of them are recorded."""
    found: list[PendingApproval] = []

    async def recorded() -> bool:
        found[:] = await list_approvals(db=harness.db, agent=agent)
        return len(found) >= count

    await until(recorded, timeout=60)
    return found


def saying(
    harness: Harness, agent: str, text: str = "Please ring the bell."
) -> asyncio.Task[Receipt]:
    """The message sent, its receipt awaited in the background (the turn waits for approval)."""
    return asyncio.ensure_future(harness.say(agent, text))
