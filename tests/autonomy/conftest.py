"""Workers for the autonomy tests: a scripted model, extra tools, autonomy settings."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from sqlmodel import col, select
from temporalio.client import Client, WorkflowHistory

from activities.gateway.providers.scripted import Script, ScriptedProvider, ScriptRule
from activities.tools.registry import Tool
from schemas.models import ProviderName
from store.tables.autonomy import ToolCallRow
from tests.harness import Harness, Stack, unique
from workers.build import build_dependencies, build_worker


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
    deps = build_dependencies(settings, providers={ProviderName.SCRIPTED: provider}, dsn=stack.dsn)
    deps.extra_tools = list(tools or [])
    queue = task_queue or unique("tq")
    worker = build_worker(client, deps, task_queue=queue)
    async with worker:
        yield Harness(
            client=client, task_queue=queue, deps=deps, provider=provider, worker=worker, db=deps.db
        )
    await deps.aclose()


async def tool_calls(harness: Harness, activation_id: str) -> list[ToolCallRow]:
    """The calls an activation made, in order."""
    async with harness.db.session() as session:
        rows = await session.exec(
            select(ToolCallRow)
            .where(ToolCallRow.activation_id == activation_id)
            .order_by(col(ToolCallRow.round), col(ToolCallRow.seq))
        )
        return list(rows)


def activity_summaries(history: WorkflowHistory) -> list[tuple[str, str]]:
    """(activity type, summary) of every activity a history scheduled, in order."""
    found = []
    for event in history.events:
        if event.HasField("activity_task_scheduled_event_attributes"):
            attrs = event.activity_task_scheduled_event_attributes
            summary = ""
            if event.user_metadata.HasField("summary"):
                summary = event.user_metadata.summary.data.decode().strip('"')
            found.append((attrs.activity_type.name, summary))
    return found
