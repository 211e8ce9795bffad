"""Culling removes exactly the low-rated old memories; maintenance runs it on a schedule."""

from __future__ import annotations

import asyncio
import random
from datetime import UTC, datetime, timedelta

import pytest
from temporalio.client import (
    Client,
    ScheduleActionExecutionStartWorkflow,
    ScheduleActionStartWorkflow,
    ScheduleHandle,
)

from activities.memory.retention import run_cull
from contract.names import maintenance_schedule_id
from schemas.dialog import DialogTurn, Role
from schemas.events import ChannelRef
from schemas.ids import new_ulid, ulid_from_parts
from schemas.memory import MemorySettings
from schemas.memory_formation import CullInput, MaintenanceInput, MaintenanceResult
from store.db import Database
from store.queries.dialog import open_conversation, record_turn
from store.queries.memory import NewRecord, insert_record
from store.queries.people import ensure_channel
from temporal.schedules import ensure_maintenance_schedule
from tests.harness import Stack
from tests.memory.formation.helpers import formation_rules, formation_worker, new_agent, rows
from workflows.maintenance import MaintenanceWorkflow

CHANNEL = ChannelRef(service="terminal", channel="cull")
NOW = datetime(2026, 6, 1, 12, 0, tzinfo=UTC)


async def seed(
    db: Database, agent: str, specs: list[tuple[int, float]], *, now: datetime = NOW
) -> dict[str, tuple[int, float]]:
    """Records of (importance, age in days at ``now``); returns them by ID."""
    made: dict[str, tuple[int, float]] = {}
    async with db.session() as session:
        channel_id = await ensure_channel(session, agent=agent, channel=CHANNEL, seen_at=now)
        for importance, age in specs:
            created = now - timedelta(days=age)
            record_id = ulid_from_parts(created, random.getrandbits(80))
            await insert_record(
                session,
                record=NewRecord(
                    id=record_id,
                    agent=agent,
                    channel_id=channel_id,
                    conversation_id=None,
                    summary=f"I remember something rated {importance}, {age:.1f} days old.",
                    importance=importance,
                    created_at=created,
                ),
            )
            made[record_id] = (importance, age)
        await session.commit()
    return made


async def remaining(db: Database, agent: str) -> set[str]:
    found = await rows(db, "SELECT id FROM memory_records WHERE agent = :a", a=agent)
    return {r.id for r in found}


@pytest.mark.parametrize(
    ("seed_value", "settings"),
    [
        (1, MemorySettings()),
        (2, MemorySettings()),
        (3, MemorySettings(cull_below=6, cull_after_days=3)),
        (4, MemorySettings(cull_below=1)),  # nothing is rated below 1: nothing goes
    ],
)
async def test_culling_deletes_exactly_the_low_rated_old_and_keeps_every_high_rated(
    db: Database, seed_value: int, settings: MemorySettings
) -> None:
    rng = random.Random(seed_value)
    agent = await new_agent(db)
    specs: list[tuple[int, float]] = []
    while len(specs) < 150:
        age = rng.uniform(0, 40)
        if abs(age - settings.cull_after_days) > 0.01:  # no record sits on the boundary
            specs.append((rng.randint(1, 10), age))
    made = await seed(db, agent, specs)
    doomed = {
        record_id
        for record_id, (importance, age) in made.items()
        if importance < settings.cull_below and age > settings.cull_after_days
    }

    dry = await run_cull(db, settings, CullInput(agent=agent, now=NOW, dry_run=True, show=1000))
    assert dry.count == len(doomed) and {r.record_id for r in dry.records} == doomed
    assert await remaining(db, agent) == set(made)  # a dry run deletes nothing

    done = await run_cull(db, settings, CullInput(agent=agent, now=NOW, actor="test", show=1000))
    assert done.count == len(doomed) and {r.record_id for r in done.records} == doomed
    left = await remaining(db, agent)
    assert left == set(made) - doomed
    assert {r for r, (importance, _) in made.items() if importance >= settings.cull_below} <= left
    audit = await rows(
        db, "SELECT record_id, action, actor, summary FROM memory_audit WHERE agent = :a", a=agent
    )
    assert {a.record_id for a in audit} == doomed
    assert {(a.action, a.actor) for a in audit} <= {("cull", "test")}
    assert all(a.summary is None for a in audit)  # who, when and why; never the text

    again = await run_cull(db, settings, CullInput(agent=agent, now=NOW))
    assert again.count == 0  # nothing left to cull


async def test_maintenance_culls_drops_expired_dialog_and_is_scheduled_once(
    client: Client, stack: Stack
) -> None:
    retention = {"memory": MemorySettings(dialog_retention_days=7), "encoder": "none"}
    async with formation_worker(
        client, stack, rules=formation_rules(), settings_overrides=retention
    ) as harness:
        agent = await new_agent(harness.db)
        now = datetime.now(UTC)
        made = await seed(harness.db, agent, [(1, 30.0), (2, 20.0), (2, 1.0), (9, 300.0)], now=now)
        old_turn, new_turn = await _dialog(harness.db, agent, now)

        created = await ensure_maintenance_schedule(
            harness.client, handle=agent, task_queue=harness.task_queue
        )
        assert created
        assert not await ensure_maintenance_schedule(
            harness.client, handle=agent, task_queue=harness.task_queue
        )
        schedule = harness.client.get_schedule_handle(maintenance_schedule_id(agent))
        try:
            described = await schedule.describe()
            action = described.schedule.action
            assert isinstance(action, ScheduleActionStartWorkflow)
            assert action.workflow == "MaintenanceWorkflow"
            assert action.id == f"maintenance/{agent}"
            await schedule.trigger()
            run_id = await _first_run(schedule)
            result = await harness.client.get_workflow_handle(
                run_id, result_type=MaintenanceResult
            ).result()
        finally:
            await schedule.delete()
        old = {r for r, (importance, age) in made.items() if importance < 3 and age > 14}
        assert result.culled == len(old) == 2
        assert await remaining(harness.db, agent) == set(made) - old
        assert result.dialog_turns == 1
        kept = await rows(harness.db, "SELECT id FROM dialog_turns WHERE agent = :a", a=agent)
        assert [k.id for k in kept] == [new_turn] and old_turn != new_turn
        audit = await rows(harness.db, "SELECT actor FROM memory_audit WHERE agent = :a", a=agent)
        assert [a.actor for a in audit] == ["maintenance"] * 2

        # A run straight from a client does the same and finds nothing more to do.
        again = await harness.client.execute_workflow(
            MaintenanceWorkflow.run,
            MaintenanceInput(agent=agent),
            id=f"maintenance/{agent}-again",
            task_queue=harness.task_queue,
        )
        assert (again.culled, again.dialog_turns, again.sweep) == (0, 0, None)


async def _first_run(schedule: ScheduleHandle) -> str:
    """The workflow ID of the schedule's first run, once it has started one."""
    deadline = datetime.now(UTC) + timedelta(seconds=30)
    while datetime.now(UTC) < deadline:
        recent = (await schedule.describe()).info.recent_actions
        if recent and isinstance(recent[0].action, ScheduleActionExecutionStartWorkflow):
            return recent[0].action.workflow_id
        await asyncio.sleep(0.2)
    raise AssertionError("the triggered schedule started nothing within 30 s")


async def _dialog(db: Database, agent: str, now: datetime) -> tuple[str, str]:
    conversation = new_ulid()
    async with db.session() as session:
        await open_conversation(
            session,
            conversation_id=conversation,
            agent=agent,
            channel=CHANNEL,
            opened_at=now - timedelta(days=10),
        )
    ids = []
    for age in (10.0, 1.0):
        turn = DialogTurn(
            turn_id=new_ulid(),
            conversation_id=conversation,
            role=Role.AGENT,
            speaker_id=agent,
            speaker_name="Wren",
            text=f"said {age} days ago",
            at=now - timedelta(days=age),
        )
        async with db.session() as session:
            await record_turn(session, agent=agent, channel=CHANNEL, turn=turn)
        ids.append(turn.turn_id)
    return ids[0], ids[1]
