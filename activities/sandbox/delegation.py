"""Delegated sandbox tasks: the inner loop's model round, its tools and its report, as activities.

``SandboxTaskWorkflow`` drives them: :meth:`DelegationActivities.think` asks the model (task
type ``sandbox``, attributed to the calling activation by the workflow's binding) what to do
next; :meth:`DelegationActivities.step` runs one of its tool calls inside the agent's execution
environment (each call its own activity with a stable ID, so a retried or resumed task never
re-runs a completed command); :meth:`DelegationActivities.deliver` sends the report to the
conversation once. Tool failures never fail an activity: the model reads them and carries on.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError
from temporalio import activity

from activities.channels.starting import start_delivery
from activities.gateway.activity_call import complete
from activities.gateway.gateway import ModelGateway
from activities.heartbeating import heartbeating
from activities.memory.encoder import Encoder
from activities.sandbox.provider import ExecutionProvider, SandboxError, SandboxUnavailableError
from activities.sandbox.shared.attribution import WorkspaceAttribution, WorkspaceRefusedError
from schemas.delivery import DeliverySettings
from schemas.models import ChatMessage, ModelRequest, TaskType, ToolSpec
from schemas.sandbox_task import (
    DeliverSandboxReportInput,
    SandboxStepInput,
    SandboxStepResult,
    SandboxThinkInput,
    SandboxThought,
)
from store.db import Database
from store.queries.agents import get_agent
from store.queries.contacts import send_unprompted
from store.tables.columns import utcnow

REPORT_PREFIX = "[sandbox task "
"""How a delivered report begins: the next turn's context source finds reports by it."""

SYSTEM = """You carry out one task in a sandboxed Linux environment, for {agent}.
You have no network. Your work directory is /work and it persists between commands.
Use the tools to write files, run commands and read their output. Work in small steps.
When the task is done (or cannot be done), stop calling tools and answer with a short report
of what you did and what came of it: this report is all {agent} will see."""


class _Args(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ReadFileArgs(_Args):
    """Read a text file in the environment."""

    path: str = Field(description="Path relative to /work (or absolute under /work).")


class WriteFileArgs(_Args):
    """Write a text file in the environment (parents are created)."""

    path: str = Field(description="Path relative to /work (or absolute under /work).")
    content: str = Field(description="The whole file's text.")


class ListFilesArgs(_Args):
    """List a directory of the environment."""

    path: str = Field(default=".", description="Directory relative to /work.")


class RunCommandArgs(_Args):
    """Run a shell command in /work."""

    command: str = Field(min_length=1, description="A shell command line (sh -c).")
    timeout_seconds: float | None = Field(
        default=None, gt=0, description="Wall-clock limit (at most the configured one)."
    )


_TOOLS: dict[str, tuple[type[_Args], str]] = {
    "read_file": (ReadFileArgs, "Read a text file in your sandbox."),
    "write_file": (WriteFileArgs, "Write a text file in your sandbox (replaces it)."),
    "list_files": (ListFilesArgs, "List the entries of a directory in your sandbox."),
    "run_command": (RunCommandArgs, "Run a shell command in your sandbox; returns its output."),
}


_WRITING = frozenset({"write_file", "run_command"})
"""The tools that can change files: their changes in shared workspaces are attributed."""


def task_tools() -> list[ToolSpec]:
    """The tools the delegated model is offered, by name."""
    specs = []
    for name, (model, description) in sorted(_TOOLS.items()):
        schema = model.model_json_schema()
        schema.pop("title", None)
        specs.append(ToolSpec(name=name, description=description, input_schema=schema))
    return specs


class DelegationActivities:
    """The activities of a delegated task, over the gateway, an execution provider and the store."""

    def __init__(
        self,
        db: Database,
        gateway: ModelGateway,
        provider: ExecutionProvider,
        *,
        delivery: DeliverySettings | None = None,
        encoder: Encoder | None = None,
    ) -> None:
        self._db = db
        self._gateway = gateway
        self._provider = provider
        self._delivery = delivery or DeliverySettings()
        self._tools = task_tools()
        # Shared workspaces (docs/tools.md): membership fences and attributed changes.
        self._workspaces = WorkspaceAttribution(db, provider, encoder)

    @activity.defn(name="sandbox.think")
    async def think(self, data: SandboxThinkInput) -> SandboxThought:
        """One model round: the calls to run next, or the final report's words."""
        messages = [ChatMessage(role="user", content=data.objective), *data.messages]
        request = ModelRequest(
            task=TaskType.SANDBOX,
            system=SYSTEM.format(agent=data.agent) + await self._workspaces.describe(data.agent),
            messages=messages,
            tools=self._tools,
            tool_choice="none" if data.final else "auto",
        )
        response = await complete(self._gateway, request)
        calls = [] if data.final else response.tool_calls
        return SandboxThought(text=response.text, tool_calls=calls)

    @activity.defn(name="sandbox.step")
    async def step(self, data: SandboxStepInput) -> SandboxStepResult:
        """Run one tool call inside the environment; its failure is the model's to read.

        Raises:
            SandboxUnavailableError: The engine is away (Temporal retries the step).
        """
        call = data.call
        # A command may run for minutes: the heartbeat lets a dead worker's step be retried soon.
        async with heartbeating():
            try:
                content = await self._attributed(data)
                is_error = False
            except SandboxUnavailableError:
                raise
            except (SandboxError, _RefusedError, WorkspaceRefusedError) as error:
                content, is_error = json.dumps({"error": str(error)}), True
        cap = data.max_output_chars
        if len(content) > cap:
            content = content[:cap] + f"\n[... {len(content) - cap} characters cut]"
        return SandboxStepResult(
            call_id=call.id, name=call.name, content=content, is_error=is_error
        )

    async def _attributed(self, data: SandboxStepInput) -> str:
        """The step, its changes in shared workspaces recorded as the agent's."""
        call = data.call

        async def run() -> str:
            return await self._run(data.agent, call.name, call.arguments, call.raw_arguments)

        if call.name not in _WRITING:
            return await run()
        return await self._workspaces.attributed(
            data.agent, run, task_id=data.task_id, channel=data.channel
        )

    async def _run(self, agent: str, name: str, arguments: dict[str, Any], raw: str | None) -> str:
        if name not in _TOOLS:
            raise _RefusedError(f"there is no tool named {name!r}; use one of: {', '.join(_TOOLS)}")
        if raw is not None:
            raise _RefusedError(f"{name}: the arguments were not a JSON object; send an object")
        model, _ = _TOOLS[name]
        try:
            args = model.model_validate(arguments)
        except ValidationError as error:
            problems = "; ".join(
                f"{'.'.join(str(p) for p in e['loc']) or 'input'}: {e['msg']}"
                for e in error.errors()[:5]
            )
            raise _RefusedError(f"{name}: invalid arguments: {problems}") from None
        handler: Callable[[str, Any], Awaitable[str]] = getattr(self, f"_{name}")
        return await handler(agent, args)

    async def _read_file(self, agent: str, args: ReadFileArgs) -> str:
        shared = await self._workspaces.check(agent, args.path, writing=False)
        text = (await self._provider.read_file(agent, args.path)).decode("utf-8", "replace")
        return self._workspaces.fenced(text) if shared else text

    async def _write_file(self, agent: str, args: WriteFileArgs) -> str:
        await self._workspaces.check(agent, args.path, writing=True)
        written = await self._provider.write_file(agent, args.path, args.content.encode())
        return f"wrote {written} bytes to {args.path}"

    async def _list_files(self, agent: str, args: ListFilesArgs) -> str:
        await self._workspaces.check(agent, args.path, writing=False)
        entries = await self._provider.list_files(agent, args.path)
        return json.dumps([entry.model_dump() for entry in entries])

    async def _run_command(self, agent: str, args: RunCommandArgs) -> str:
        result = await self._provider.run(agent, args.command, timeout_seconds=args.timeout_seconds)
        return result.model_dump_json()

    @activity.defn(name="sandbox.deliver")
    async def deliver(self, data: DeliverSandboxReportInput) -> bool:
        """Send the report to the conversation as an unprompted message, once per task.

        The message joins the channel's latest conversation in the stored dialog, so the
        agent's next turn reads it there; ``False`` means a retry found it already sent.
        """
        async with self._db.session() as session:
            found = await get_agent(session, handle=data.agent)
            name = found.name if found else data.agent
            _, queued = await send_unprompted(
                session,
                message_id=data.task_id,
                agent=data.agent,
                agent_name=name,
                channel=data.channel,
                text=report_message(data),
                at=utcnow(),
            )
        # Started here rather than left to the sweep, so a push channel gets it at once.
        await start_delivery(
            activity.client(),
            message_id=data.task_id,
            agent=data.agent,
            channel=data.channel,
            unprompted=True,
            settings=self._delivery,
        )
        return queued


def report_message(data: DeliverSandboxReportInput) -> str:
    """The report as the conversation (and the agent's next turn) reads it."""
    report = data.report
    return f"{REPORT_PREFIX}{report.task_id}: {report.status}] {report.text}".strip()


class _RefusedError(Exception):
    """Malformed or unknown tool input: returned to the model as an error."""
