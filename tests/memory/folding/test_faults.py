"""Folding when things fail: a provider that refuses, one that is throttled, a reply that does
not fit, a retried step, a batch that changed, and maintenance starting the pass."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest
from hypothesis import given, settings
from pydantic import ValidationError
from sqlalchemy import text
from temporalio.client import Client

from activities.gateway.providers.scripted import ScriptRule
from activities.memory.folding import FoldingActivities, plain_fold
from activities.tools.builtin.memory import DrillDownInput
from contract import names
from schemas.folding import FoldBatch, FoldingInput, FoldInput, FoldMode, FoldPlanInput
from schemas.ids import new_ulid
from schemas.memory import MemoryRecordPublic
from schemas.memory_formation import MaintenanceInput
from schemas.text import unstorable
from store.db import Database
from store.queries.folding import FoldSource
from store.queries.memory import forget
from tests.harness import Harness, Stack, replayer, running_worker
from tests.memory.folding.month import START, live_a_month, summary_of
from tests.schemas.test_hostile_text import json_values, strings_in
from workflows.folding import FoldingWorkflow
from workflows.maintenance import MaintenanceWorkflow

REPLY = json.dumps({"summary": "I spent the week helping Max in his garden."})


async def _fold(client: Client, harness: Harness, agent: str) -> list[str]:
    result = await client.execute_workflow(
        FoldingWorkflow.run,
        FoldingInput(agent=agent),
        id=names.folding_workflow_id(agent),
        task_queue=harness.task_queue,
    )
    return result.folded


async def _levels(db: Database, agent: str) -> list[tuple[int, str | None, dict[str, object]]]:
    async with db.session() as session:
        rows = (
            await (await session.connection()).execute(
                text(
                    "SELECT level, folded_into, rubric FROM memory_records WHERE agent = :a "
                    "ORDER BY level, id"
                ),
                {"a": agent},
            )
        ).all()
    return [(r.level, r.folded_into, r.rubric or {}) for r in rows]


async def test_a_refusing_provider_folds_nothing_and_loses_nothing(
    client: Client, stack: Stack
) -> None:
    rules = [ScriptRule(task="fold", fail="auth")]
    async with running_worker(client, stack, rules=rules) as harness:
        agent = (await harness.create_agent()).handle
        await live_a_month(harness.db, None, agent=agent, days=6)
        assert await _fold(client, harness, agent) == []
        levels = await _levels(harness.db, agent)
    assert levels == [(1, None, {})] * 6  # every record still there, still unfolded


async def test_a_throttled_provider_folds_once_after_its_retries(
    client: Client, stack: Stack
) -> None:
    rules = [
        ScriptRule(task="fold", fail="rate_limit", retry_after=0.1, times=2),
        ScriptRule(task="fold", reply=REPLY),
    ]
    async with running_worker(client, stack, rules=rules) as harness:
        agent = (await harness.create_agent()).handle
        await live_a_month(harness.db, None, agent=agent, days=6)
        [folded] = await _fold(client, harness, agent)
        levels = await _levels(harness.db, agent)
    assert [level for level, _, _ in levels] == [1] * 6 + [2]  # one recollection, not three
    assert {into for level, into, _ in levels if level == 1} == {folded}


async def test_a_reply_that_never_fits_is_folded_without_the_model(
    client: Client, stack: Stack
) -> None:
    rules = [ScriptRule(task="fold", reply="I cannot answer in JSON, sorry.")]
    async with running_worker(client, stack, rules=rules) as harness:
        agent = (await harness.create_agent()).handle
        await live_a_month(harness.db, None, agent=agent, days=6)
        [folded] = await _fold(client, harness, agent)
        async with harness.db.session() as session:
            summary = (
                await (await session.connection()).execute(
                    text("SELECT summary, rubric FROM memory_records WHERE id = :id"),
                    {"id": folded},
                )
            ).one()
    assert summary.rubric["mode"] == FoldMode.PLAIN
    assert summary.summary.startswith("From 2026-10-01 to 2026-10-06, 6 memories.")


async def test_a_retried_fold_finds_its_write_and_a_changed_batch_is_skipped(
    client: Client, stack: Stack
) -> None:
    async with running_worker(client, stack, rules=[ScriptRule(task="fold", reply=REPLY)]) as h:
        agent = (await h.create_agent()).handle
        month = await live_a_month(h.db, None, agent=agent, days=12)
        steps = FoldingActivities(h.db, h.deps.gateway, None, h.deps.settings.memory)
        first, second = (await steps.fold_plan(FoldPlanInput(agent=agent))).batches
        step = FoldInput(recollection_id=new_ulid(), batch=first)
        done = await steps.fold(step)
        # The worker died after the commit: the retry answers with the same write.
        again = await steps.fold(step)
        assert again.recollection_id == done.recollection_id
        # A record of the second batch is forgotten after the plan: that batch waits.
        async with h.db.session() as session:
            await forget(
                session,
                record_id=month.records[8],
                actor="operator:test",
                reason=None,
                now=datetime.now(UTC),
            )
        skipped = await steps.fold(FoldInput(recollection_id=new_ulid(), batch=second))
        assert skipped.recollection_id is None and skipped.skipped
        levels = await _levels(h.db, agent)
    assert [level for level, _, _ in levels].count(2) == 1


async def test_maintenance_starts_the_pass_when_records_are_ready(
    client: Client, stack: Stack
) -> None:
    async with running_worker(client, stack, rules=[ScriptRule(task="fold", reply=REPLY)]) as h:
        agent = (await h.create_agent()).handle
        idle = await client.execute_workflow(
            MaintenanceWorkflow.run,
            MaintenanceInput(agent=agent),
            id=f"maintenance-test-{new_ulid()}",
            task_queue=h.task_queue,
        )
        assert idle.folding is None  # nothing to fold: no pass started
        await live_a_month(h.db, None, agent=agent, days=6)
        maintenance = await client.start_workflow(
            MaintenanceWorkflow.run,
            MaintenanceInput(agent=agent),
            id=f"maintenance-test-{new_ulid()}",
            task_queue=h.task_queue,
        )
        result = await maintenance.result()
        assert result.folding == names.folding_workflow_id(agent)
        folding = await client.get_workflow_handle_for(FoldingWorkflow.run, result.folding).result()
        assert len(folding.folded) == 1
        history = await maintenance.fetch_history()
    await replayer(client).replay_workflow(history)


def test_a_plain_recollection_says_what_is_shared_once_then_what_each_record_says() -> None:
    sources = []
    for day in range(1, 7):
        when = START.replace(day=day)
        said = f'I talked with Max on terminal:tty. Max said: "{summary_of(day)} Really!" '
        said += f"More on day {day}."
        sources.append(_source(day, said, when))
    folded = plain_fold(sources, max_chars=300)
    assert folded.startswith("From 2026-10-01 to 2026-10-06, 6 memories. I talked with Max")
    assert folded.count("I talked with Max") == 1  # shared by all: said once
    assert len(folded) <= 300
    assert "More on" not in folded  # one sentence each: the details blur
    assert folded.count('"') % 2 == 0  # a quotation is kept whole, or closed where it is cut
    everything = plain_fold(sources, max_chars=10_000)
    assert everything.index("(day 06)") < everything.index("(day 01)")  # rated 6 before 1


def _source(day: int, summary: str, when: datetime) -> FoldSource:
    record = MemoryRecordPublic(
        id=new_ulid(),
        agent="folding",
        channel_id=new_ulid(),
        summary=summary,
        importance=day,
        created_at=when,
    )
    return FoldSource(record=record, first_at=when, last_at=when)


def test_a_batch_is_refused_at_the_door_when_it_is_not_a_batch() -> None:
    with pytest.raises(ValidationError, match="records"):
        FoldBatch(agent="ada", level=1, channel_id=new_ulid(), records=[new_ulid()])
    with pytest.raises(ValidationError, match="NUL"):
        FoldingInput(agent="ada\x00")


@settings(max_examples=100, deadline=None)
@given(payload=json_values)
def test_any_json_at_the_folding_doors_is_refused_or_storable(payload: object) -> None:
    for door in (FoldingInput, FoldInput, DrillDownInput):
        try:
            found = door.model_validate(payload)
        except ValidationError:
            continue
        text = [s for s in strings_in(found.model_dump(mode="python")) if unstorable(s)]
        assert text == [], f"{door.__name__} accepted what PostgreSQL cannot store"
