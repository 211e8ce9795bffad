"""``run_code``: sandboxed code execution by delegation (spec §4.6).

The tool never runs the model's code itself. It starts ``SandboxTaskWorkflow``
(``sandbox/{call ulid}``), a delegated agent loop inside the agent's execution environment, and
returns at once: the agent's turn goes on while the task runs, and the task's report arrives in
the conversation (and so in the agent's next turn) when it is done. With no engine reachable
the tool is absent from the registry, for the reason :func:`code_tools_availability` gives.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging

from pydantic import BaseModel, Field
from temporalio.client import Client

from activities.sandbox.factory import sandbox_availability
from activities.sandbox.provider import SandboxConfigError
from activities.tools.background import start_once
from activities.tools.builtin.deps import ToolDeps
from activities.tools.registry import Tool, ToolError, ToolInput, ToolRun
from contract import attribution, names
from schemas.sandbox import Availability
from schemas.sandbox_task import SandboxTaskBounds, SandboxTaskInput
from schemas.settings import Settings

TOOL_NAME = "run_code"

log = logging.getLogger(__name__)


class RunCodeInput(ToolInput):
    """Input of ``run_code``: the task, in words."""

    task: str = Field(
        min_length=1,
        max_length=20_000,
        description="What to do in your sandbox, in words: the files to write, the commands "
        "to run, what to find out. Include any code or data it needs.",
    )
    max_rounds: int = Field(
        default=8, ge=1, le=50, description="How many model rounds the task may take."
    )


class RunCodeStarted(BaseModel):
    """The acknowledgement: the task runs on; its report comes later."""

    task_id: str
    status: str = "started"
    note: str = (
        "The task runs in the background; its report will arrive in this conversation. "
        "Tell the person you started it; do not wait for it."
    )


class RunCode(Tool):
    """Delegate a task to a sandboxed agent loop."""

    name = TOOL_NAME
    description = (
        "Run code in your own sandboxed Linux environment (no network, files kept in /work). "
        "A helper carries out the task you describe (writing files, running commands) and "
        "reports back in this conversation when done; this call returns at once."
    )
    input_model = RunCodeInput
    output_model = RunCodeStarted

    def __init__(self, client: Client) -> None:
        self._client = client

    async def run(self, call: ToolRun, args: RunCodeInput) -> RunCodeStarted:
        """Start the task (once per stored call: a retried call finds it started)."""
        if not call.call_id:
            raise ToolError("run_code needs a stored tool call")
        context = call.context
        task = SandboxTaskInput(
            task_id=call.call_id,
            agent=context.agent,
            objective=args.task,
            channel=context.channel,
            activation_id=context.activation_id,
            attribution=attribution.current(),
            bounds=SandboxTaskBounds(max_rounds=args.max_rounds),
        )
        # A retried call finds the task it started running.
        await start_once(
            self._client,
            names.SANDBOX_TASK_WORKFLOW,
            task,
            workflow_id=names.sandbox_task_workflow_id(task.task_id),
            context=context,
            trigger="sandbox",
            summary=f"sandbox task for {context.agent}: {_first_line(args.task)}",
            details=args.task[:2000],
        )
        return RunCodeStarted(task_id=task.task_id)


def _first_line(text: str, limit: int = 80) -> str:
    line = text.strip().splitlines()[0] if text.strip() else ""
    return line if len(line) <= limit else line[: limit - 1] + "…"


async def code_tools_availability(settings: Settings) -> Availability:
    """Whether ``run_code`` can be offered, and if not why, in one line (never raises)."""
    return await sandbox_availability(settings.sandbox)


def code_tools(deps: ToolDeps) -> list[Tool]:
    """``run_code`` when a Temporal client and an execution engine are there, else nothing.

    Called while the registry is built (synchronously, at worker start): the engine check runs
    on its own thread and loop, so it never blocks or nests the worker's own loop.
    """
    if deps.client is None:
        return []
    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
        available = pool.submit(asyncio.run, code_tools_availability(deps.settings)).result()
    if available.misconfigured:
        # A network or runtime the engine lacks is the operator's mistake: refusing to start
        # names it, where leaving the tool out would let it pass unnoticed.
        raise SandboxConfigError(available.reason)
    if not available.available:
        log.info("%s absent: %s", TOOL_NAME, available.reason)
        return []
    return [RunCode(deps.client)]
