"""Helpers of the delegation tests: a worker whose sandbox is the test engine, a scripted task."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from docker.errors import DockerException
from sqlmodel import col, select
from temporalio.client import Client

from activities.gateway.providers.scripted import ScriptRule, ScriptToolCall
from activities.sandbox.docker import DockerProvider
from contract import names
from schemas.ids import new_ulid
from schemas.sandbox_task import SandboxReport, SandboxTaskBounds, SandboxTaskInput
from store.tables import OutboxRow
from tests.harness import Harness, Stack, running_worker, terminal
from tests.observability.fakes import RecordingMeter
from tests.sandbox.engine import DockerEngine


def sandbox_rules() -> list[ScriptRule]:
    """The delegated model: write a script, run it, report what it printed."""
    return [
        ScriptRule(task="sandbox", tool_match="sixty-four", reply="The script printed 42."),
        ScriptRule(
            task="sandbox",
            tool_match="wrote",
            tool_calls=[ScriptToolCall(name="run_command", arguments={"command": "sh six.sh"})],
        ),
        ScriptRule(
            task="sandbox",
            after_tool=False,
            tool_calls=[
                ScriptToolCall(
                    name="write_file",
                    arguments={"path": "six.sh", "content": "echo sixty-four $((6*7))\n"},
                )
            ],
        ),
    ]


@asynccontextmanager
async def sandbox_worker(
    client: Client,
    stack: Stack,
    engine: DockerEngine,
    *,
    rules: list[ScriptRule],
    meters: list[RecordingMeter] | None = None,
) -> AsyncIterator[Harness]:
    """A worker whose sandbox is the test engine."""
    overrides: dict[str, object] = {"sandbox": {"docker_host": engine.host, "image": engine.image}}
    async with running_worker(
        client, stack, rules=rules, settings_overrides=overrides, meters=list(meters or [])
    ) as harness:
        try:
            yield harness
        finally:
            provider = DockerProvider(harness.deps.settings.sandbox)
            for agent in _agents:
                # Best effort: the engine may still hold the volume for a moment.
                with contextlib.suppress(DockerException):
                    await provider.teardown(agent)
            await provider.close()
            _agents.clear()


_agents: list[str] = []


async def new_agent(harness: Harness) -> str:
    handle = (await harness.create_agent()).handle
    _agents.append(handle)
    return handle


async def unprompted(harness: Harness, agent: str) -> list[OutboxRow]:
    async with harness.db.session() as session:
        rows = await session.exec(
            select(OutboxRow)
            .where(OutboxRow.agent == agent, col(OutboxRow.unprompted).is_(True))
            .order_by(col(OutboxRow.created_at))
        )
        return list(rows)


async def run_task(
    harness: Harness, agent: str, objective: str, bounds: SandboxTaskBounds | None = None
) -> SandboxReport:
    task = SandboxTaskInput(
        task_id=new_ulid(),
        agent=agent,
        objective=objective,
        channel=terminal(),
        activation_id=new_ulid(),
        bounds=bounds or SandboxTaskBounds(max_rounds=6),
    )
    report: SandboxReport = await harness.client.execute_workflow(
        names.SANDBOX_TASK_WORKFLOW,
        task,
        id=names.sandbox_task_workflow_id(task.task_id),
        task_queue=harness.task_queue,
        result_type=SandboxReport,
    )
    return report
