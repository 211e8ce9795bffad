"""Workers for the autonomy tests: a scripted model, extra tools, autonomy settings."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import UTC, datetime
from typing import Any

from sqlmodel import col, select
from temporalio.client import Client, ScheduleActionExecutionStartWorkflow, WorkflowHistory
from temporalio.converter import DataConverter
from temporalio.service import RPCError, RPCStatusCode

from activities.gateway.providers.scripted import Script, ScriptedProvider, ScriptRule
from activities.tools.registry import Tool
from schemas.autonomy import FiringResult
from schemas.events import CompletionMarker, Receipt, ReceiptStatus
from schemas.models import ProviderName
from store.tables.autonomy import ToolCallRow
from temporal import inbox
from tests.harness import Harness, Stack, close_dependencies, dependencies, unique, until
from workers.build import build_worker


@asynccontextmanager
async def autonomy_worker(
    client: Client,
    stack: Stack,
    *,
    rules: list[ScriptRule] | None = None,
    tools: list[Tool] | None = None,
    autonomy: dict[str, Any] | None = None,
    task_queue: str | None = None,
) -> AsyncIterator[Harness]:
    """A worker whose model follows ``rules``, offering the built-ins plus ``tools``."""
    settings = stack.settings(autonomy=autonomy or {})
    provider = ScriptedProvider(Script(rules=rules or []))
    deps = dependencies(settings, providers={ProviderName.SCRIPTED: provider}, dsn=stack.dsn)
    deps.extra_tools = list(tools or [])
    queue = task_queue or unique("tq")
    worker = build_worker(client, deps, task_queue=queue)
    async with worker:
        yield Harness(
            client=client, task_queue=queue, deps=deps, provider=provider, worker=worker, db=deps.db
        )
    await close_dependencies(deps)


async def tool_calls(harness: Harness, activation_id: str) -> list[ToolCallRow]:
    """The calls an activation made, in order."""
    async with harness.db.session() as session:
        rows = await session.exec(
            select(ToolCallRow)
            .where(ToolCallRow.activation_id == activation_id)
            .order_by(col(ToolCallRow.round), col(ToolCallRow.seq))
        )
        return list(rows)


async def activity_summaries(
    history: WorkflowHistory, converter: DataConverter
) -> list[tuple[str, str]]:
    """(activity type, summary) of every activity a history scheduled, in order."""
    found = []
    for event in history.events:
        if event.HasField("activity_task_scheduled_event_attributes"):
            attrs = event.activity_task_scheduled_event_attributes
            summary = ""
            if event.user_metadata.HasField("summary"):
                # Through the client's converter: the payload codec seals summaries too.
                [summary] = await converter.decode([event.user_metadata.summary])
            found.append((attrs.activity_type.name, summary))
    return found


async def impulse_receipt(harness: Harness, handle: str, event_id: str) -> Receipt:
    """Wait for the agent to finish a delivered impulse (its completion marker appears)."""
    found: list[CompletionMarker] = []

    async def finished() -> bool:
        try:
            answer = await inbox.marker(harness.client, handle=handle, event_id=event_id)
        except RPCError as err:
            if err.status is not RPCStatusCode.NOT_FOUND:
                raise
            return False  # the impulse that starts the agent's inbox is not signalled yet

        if answer.marker is not None:
            found.append(answer.marker)
        return bool(found)

    await until(finished, timeout=120)
    return Receipt(event_id=event_id, agent=handle, status=ReceiptStatus.COMPLETED, marker=found[0])


async def fired_run(client: Client, schedule_id: str) -> FiringResult:
    """The result of the schedule's latest firing (waits for it to finish)."""
    description = await client.get_schedule_handle(schedule_id).describe()
    action = description.info.recent_actions[-1].action
    assert isinstance(action, ScheduleActionExecutionStartWorkflow)
    run = client.get_workflow_handle(
        action.workflow_id, run_id=action.first_execution_run_id, result_type=FiringResult
    )
    result: FiringResult = await run.result()
    return result


async def scheduled_run(client: Client, schedule_id: str, at: datetime) -> FiringResult:
    """The result of the run a schedule starts at ``at`` (its ID is the schedule's plus ``at``).

    Waits for the run to appear: a one-shot reminder deletes its own schedule as it finishes,
    so the schedule cannot be asked afterwards.
    """
    run = client.get_workflow_handle(
        f"{schedule_id}-{at.astimezone(UTC):%Y-%m-%dT%H:%M:%SZ}", result_type=FiringResult
    )

    async def started() -> bool:
        try:
            await run.describe()
        except RPCError:
            return False
        return True

    await until(started)
    result: FiringResult = await run.result()
    return result
