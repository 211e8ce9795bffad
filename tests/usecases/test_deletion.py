"""Deleting an agent on the real stack: its runs and schedules end, no row of it is left in any
table that names an agent (read from the tables themselves, so a new table cannot be missed),
its usage totals stay, and the deletion's audit says who and when."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import timedelta
from typing import Any

import pytest
from sqlalchemy import Table
from sqlmodel import SQLModel
from temporalio.client import Client, WorkflowExecutionStatus

import store.tables  # noqa: F401  (every table in the metadata)
from activities.scheduling.reminders import Reminders
from contract import names
from schemas.agents import AgentCreate
from schemas.guardrails import EndConversationRequest
from schemas.ids import new_ulid
from store.db import Database
from store.queries.agent_deletion import AGENT_COLUMNS, KEPT, erase_agent, owned_tables
from store.queries.agents import create_agent
from store.queries.runtime import save_prompt
from store.sql import execute
from store.tables.columns import utcnow
from temporal.schedules_autonomy import describe
from tests.harness import Stack, unique
from tests.memory.formation.helpers import (
    close_and_consolidate,
    formation_rules,
    formation_worker,
    records_of,
)
from usecases import agents
from usecases.deletion import delete_agent
from usecases.errors import UnknownAgentError


@pytest.fixture
async def db(stack: Stack) -> AsyncIterator[Database]:
    database = Database(stack.dsn, pool_size=2)
    yield database
    await database.aclose()


def agent_tables() -> list[tuple[Table, str]]:
    """Every table with a column naming an agent, and that column (``agents`` by its key)."""
    found = [(t, c) for t in SQLModel.metadata.sorted_tables for c in AGENT_COLUMNS if c in t.c]
    return [(SQLModel.metadata.tables["agents"], "handle"), *found]


async def scalar(db: Database, sql: str, **params: Any) -> Any:
    async with db.session() as session:
        return (await execute(session, sql, params)).scalar_one()


async def rows_of(db: Database, handle: str) -> dict[str, int]:
    counts = {}
    for table, column in agent_tables():
        sql = f"SELECT count(*) FROM {table.name} WHERE {column} = :a"
        counts[table.name] = int(await scalar(db, sql, a=handle))
    return counts


async def usage(db: Database, handle: str) -> tuple[int, int]:
    """(records, input and output tokens) of the agent, raw and summed by day together."""
    async with db.session() as session:
        raw = (
            await execute(
                session,
                "SELECT count(*), coalesce(sum(input_tokens + output_tokens), 0) "
                "FROM usage_records WHERE agent = :a",
                {"a": handle},
            )
        ).one()
        summed = (
            await execute(
                session,
                "SELECT coalesce(sum(records), 0), coalesce(sum(input_tokens + output_tokens), 0) "
                "FROM usage_daily WHERE agent = :a",
                {"a": handle},
            )
        ).one()
    raw_records, raw_tokens = (int(v) for v in raw)
    summed_records, summed_tokens = (int(v) for v in summed)
    return raw_records + summed_records, raw_tokens + summed_tokens


async def status(client: Client, workflow_id: str) -> WorkflowExecutionStatus | None:
    return (await client.get_workflow_handle(workflow_id).describe()).status


def test_every_table_naming_an_agent_is_erased_or_kept_on_purpose() -> None:
    covered = {t.name for t in owned_tables()} | set(KEPT)
    naming = {t.name for t, _ in agent_tables()}
    assert naming - covered == set(), "a table names an agent that deleting one leaves alone"


async def test_deleting_an_agent_ends_its_runs_and_leaves_only_its_usage_and_the_audit(
    client: Client, stack: Stack, db: Database
) -> None:
    async with formation_worker(client, stack, rules=formation_rules()) as harness:
        settings = stack.settings(task_queue=harness.task_queue, sandbox={"enabled": False})
        spec = AgentCreate(handle=unique("del"), name="Wren", persona="A diarist.")
        handle = (await agents.create_agent(settings=settings, spec=spec)).handle
        first = await harness.say(handle, "Good morning! The roses are out.")
        assert first.marker and first.marker.conversation_id
        closed = first.marker.conversation_id
        await client.get_workflow_handle(names.conversation_workflow_id(closed)).signal(
            names.END_CONVERSATION, EndConversationRequest(reason="the test closes it")
        )
        await close_and_consolidate(client, closed)
        assert await records_of(harness.db, handle)  # a memory was formed
        second = await harness.say(handle, "Tell me about the tides.")
        assert second.marker and second.marker.conversation_id
        still_open = second.marker.conversation_id
        reminder = await Reminders(harness.db, client, settings.autonomy).create(
            agent=handle,
            objective="water the roses",
            now=utcnow(),
            task_queue=harness.task_queue,
            at=utcnow() + timedelta(days=1),
        )
    before = await rows_of(db, handle)
    assert before["dialog_turns"] >= 4 and before["memory_records"] >= 1 and before["outbox"]
    activations = await scalar(
        db, "SELECT array_agg(id) FROM activations WHERE agent = :a", a=handle
    )
    prompts = "SELECT count(*) FROM prompts WHERE activation_id = ANY(CAST(:ids AS varchar[]))"
    assert await scalar(db, prompts, ids=activations) > 0
    billed = await usage(db, handle)
    assert billed[0] > 0
    assert await status(client, names.conversation_workflow_id(still_open)) == (
        WorkflowExecutionStatus.RUNNING
    )

    report = await delete_agent(settings=settings, handle=handle, actor="tester")

    after = await rows_of(db, handle)
    left = {table: n for table, n in after.items() if n and table not in KEPT}
    assert left == {}, "rows of the deleted agent remain"
    assert await scalar(db, prompts, ids=activations) == 0
    assert await usage(db, handle) == billed  # the totals, summed by day
    assert after["usage_daily"] > 0
    audit = await scalar(
        db,
        "SELECT row_to_json(d)::text FROM agent_deletions d WHERE agent = :a",
        a=handle,
    )
    assert '"deleted_by":"tester"' in audit and '"deleted_at"' in audit
    assert report.erased.rows["dialog_turns"] == before["dialog_turns"]
    ended = (names.agent_workflow_id(handle), names.conversation_workflow_id(still_open))
    for workflow_id in ended:
        assert await status(client, workflow_id) == WorkflowExecutionStatus.TERMINATED
    for schedule_id in (
        names.heartbeat_schedule_id(handle),
        names.maintenance_schedule_id(handle),
        names.reminder_schedule_id(reminder.reminder_id),
    ):
        assert await describe(client, schedule_id) is None, schedule_id
    assert report.schedules == 3
    with pytest.raises(UnknownAgentError):
        await delete_agent(settings=settings, handle=handle, actor="tester")


async def test_a_prompt_only_an_ended_run_knew_goes_and_another_agents_stays(
    db: Database,
) -> None:
    mine, theirs = unique("del"), unique("keep")
    ended, other = new_ulid(), new_ulid()
    async with db.session() as session:
        for handle in (mine, theirs):
            await create_agent(session, spec=AgentCreate(handle=handle, name="A", persona="B"))
        for activation in (ended, other):
            await save_prompt(
                db.lane,
                prompt_id=new_ulid(),
                activation_id=activation,
                task="respond",
                system="the persona",
                messages=[],
                token_estimate=3,
                created_at=utcnow(),
            )
        await erase_agent(session, agent=mine, actor="tester", keys=0, activations=[ended])
    left = "SELECT count(*) FROM prompts WHERE activation_id = :a"
    assert await scalar(db, left, a=ended) == 0
    assert await scalar(db, left, a=other) == 1
