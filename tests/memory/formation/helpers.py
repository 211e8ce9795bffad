"""Shared pieces of the memory-formation tests: scripted model rules, workers, waiting."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from typing import Any

from temporalio.client import Client

from activities.gateway.providers.scripted import Script, ScriptedProvider, ScriptRule
from activities.memory.encoder import Encoder
from contract import names
from schemas.agents import AgentConfig, AgentCreate
from schemas.memory import MemoryRecordPublic
from schemas.memory_formation import ConsolidationResult
from schemas.models import ModelRequest, ProviderName
from store.db import Database
from store.queries.agents import create_agent
from store.queries.memory import list_records
from store.sql import execute
from tests.harness import Harness, Stack, close_dependencies, dependencies, unique
from workers.build import build_worker

SUMMARY_SYSTEM = "forming an autobiographical memory"
RATING_SYSTEM = "rating how much one of your own memories matters"
CLASSIFY_SYSTEM = "classifying one of your own memories"

DEFAULT_SUMMARY = (
    "I talked with Ada about her travels. I assumed, without confirming, that she was still "
    "in Lisbon."
)


def rating(importance: int = 7) -> dict[str, Any]:
    return {
        "emotional_significance": 5,
        "decision_making": 4,
        "novelty": 6,
        "continuation": 3,
        "explicit_importance": 2,
        "importance": importance,
        "reason": "a first real conversation",
    }


def classification(sensitivity: str = "private") -> dict[str, Any]:
    return {
        "emotions": {"engaged": 0.2, "curious": 0.6, "neutral": 0.2},
        "sensitivity": sensitivity,
        "tags": ["Travel", " lisbon ", "travel"],
    }


def formation_rules(
    summaries: dict[str, str] | None = None,
    *,
    importance: int = 7,
    sensitivity: str = "private",
) -> list[ScriptRule]:
    """Valid JSON for the three formation calls; ``summaries`` maps a word in the chunk to one."""
    rules = [
        ScriptRule(
            task="summarize",
            system_match=SUMMARY_SYSTEM,
            match=word,
            reply=json.dumps({"summary": summary}),
        )
        for word, summary in (summaries or {}).items()
    ]
    return [
        *rules,
        ScriptRule(
            task="summarize",
            system_match=SUMMARY_SYSTEM,
            reply=json.dumps({"summary": DEFAULT_SUMMARY}),
        ),
        ScriptRule(task="rate", system_match=RATING_SYSTEM, reply=json.dumps(rating(importance))),
        ScriptRule(
            task="classify",
            system_match=CLASSIFY_SYSTEM,
            reply=json.dumps(classification(sensitivity)),
        ),
    ]


def formation_requests(provider: ScriptedProvider, task: str) -> list[ModelRequest]:
    """The requests of one formation stage the scripted model received."""
    return [r for r in provider.requests if r.task.value == task]


def whole_prompt(request: ModelRequest) -> str:
    return request.system + "\n" + "\n".join(m.content for m in request.messages)


@asynccontextmanager
async def formation_worker(
    client: Client,
    stack: Stack,
    *,
    rules: list[ScriptRule],
    encoder: Encoder | None = None,
    settings_overrides: Mapping[str, object] | None = None,
) -> AsyncIterator[Harness]:
    """A worker with a scripted model and ``encoder`` (by default the session's), kept open."""
    settings = stack.settings(**dict(settings_overrides or {}))
    provider = ScriptedProvider(Script(rules=rules))
    deps = dependencies(settings, providers={ProviderName.SCRIPTED: provider}, dsn=stack.dsn)
    if encoder is not None:
        deps.encoder = encoder
    queue = unique("tq")
    worker = build_worker(client, deps, task_queue=queue)
    try:
        async with worker:
            yield Harness(client, queue, deps, provider, worker, deps.db)
    finally:
        if encoder is not None:
            deps.encoder = None  # the caller's encoder outlives this worker
        await close_dependencies(deps)


async def new_agent(db: Database, *, idle_minutes: float = 30.0) -> str:
    handle = unique("form")
    async with db.session() as session:
        await create_agent(
            session,
            spec=AgentCreate(
                handle=handle,
                name="Wren",
                persona="A thoughtful agent who keeps a diary of everything.",
                config=AgentConfig(idle_minutes=idle_minutes),
            ),
        )
    return handle


async def consolidation_ids(client: Client, conversation_id: str) -> list[str]:
    """Workflow IDs of the consolidations a conversation started, from its own history."""
    handle = client.get_workflow_handle(names.conversation_workflow_id(conversation_id))
    found: list[str] = []
    async for event in handle.fetch_history_events():
        if event.HasField("start_child_workflow_execution_initiated_event_attributes"):
            attrs = event.start_child_workflow_execution_initiated_event_attributes
            if attrs.workflow_type.name == "ConsolidationWorkflow":
                found.append(attrs.workflow_id)
    return found


async def close_and_consolidate(client: Client, conversation_id: str) -> list[ConsolidationResult]:
    """Wait for the conversation to close, then for every consolidation it started."""
    await client.get_workflow_handle(names.conversation_workflow_id(conversation_id)).result()
    results = []
    for workflow_id in await consolidation_ids(client, conversation_id):
        handle = client.get_workflow_handle(workflow_id, result_type=ConsolidationResult)
        results.append(await handle.result())
    return results


async def records_of(db: Database, agent: str) -> list[MemoryRecordPublic]:
    """The agent's remembered records, oldest first."""
    async with db.session() as session:
        found = await list_records(session, agent=agent, limit=1000)
    return [record for record, _ in reversed(found)]


async def row(db: Database, sql: str, **params: Any) -> Any:
    async with db.session() as session:
        return (await execute(session, sql, params)).first()


async def rows(db: Database, sql: str, **params: Any) -> list[Any]:
    """Run ``sql`` (committed, so an UPDATE sticks) and return its rows."""
    async with db.session() as session:
        found = list((await execute(session, sql, params)).all())
        await session.commit()
    return found
