"""The heartbeat: bootstrapped once, deleted durably across a restart of every process, restored.

Schedules need the dev server (the time-skipping test server does not implement them); this
test runs its own, persisted to a file, so it can be stopped and started again.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from temporalio.client import Client

from activities.autonomy.held import wake_run_id
from activities.gateway.providers.scripted import ScriptRule
from activities.scheduling.heartbeats import Heartbeats, reconcile_heartbeats
from activities.scheduling.reminders import Reminders
from cli import heartbeat as heartbeat_cli
from contract import names
from schemas.autonomy import DORMANT_REASON, FiringResult, HeartbeatState
from schemas.events import Outcome
from schemas.settings import Settings
from store.embedded import EmbeddedPostgres
from store.queries.autonomy import held_firings
from temporal import schedules_autonomy as schedules
from temporal import search_attributes
from temporal.client import connect
from temporal.devserver import DevServer, free_port
from tests.autonomy.conftest import autonomy_worker, fired_run, impulse_receipt
from tests.harness import Stack, unique, until

RULES = [
    ScriptRule(task="critique", system_match="during its heartbeat", reply="All is quiet."),
    ScriptRule(task="respond", match="Heartbeat", reply="I reflected; nothing needs doing."),
]


class PersistedTemporal:
    """A dev server persisted to a file, so it can be restarted with its state."""

    def __init__(self, directory: Path) -> None:
        self.server = DevServer(
            port=free_port(),
            ui_port=None,
            db_file=directory / "temporal.db",
            log_file=directory / "temporal.log",
        )
        self.process = self.server.start(detached=False)

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.server.port}"

    def stop(self) -> None:
        self.process.terminate()
        self.process.wait(20)

    def restart(self) -> None:
        self.stop()
        self.process = self.server.start(detached=False)


@pytest.fixture
async def temporal(tmp_path: Path) -> AsyncIterator[PersistedTemporal]:
    server = PersistedTemporal(tmp_path)
    yield server
    server.stop()


async def _client(stack: Stack, address: str) -> Client:
    connected = await connect(stack.settings(), address=address, ready_within=20)
    await search_attributes.register(connected)
    return connected


async def test_a_deleted_heartbeat_stays_deleted_across_a_full_restart_and_restore_wakes_it(
    stack: Stack, postgres: EmbeddedPostgres, temporal: PersistedTemporal
) -> None:
    queue = unique("tq")
    settings: Settings = stack.settings(temporal_address=temporal.address, task_queue=queue)
    client = await _client(stack, temporal.address)
    async with autonomy_worker(client, stack, rules=RULES, task_queue=queue) as harness:
        handle = (await harness.create_agent()).handle
        # `persyn agent create` bootstraps the heartbeat, exactly once.
        assert await heartbeat_cli.bootstrap(client, settings, handle)
        assert not await heartbeat_cli.bootstrap(client, settings, handle)
        heartbeats = Heartbeats(harness.db, client, settings.autonomy)
        status = await heartbeats.status(agent=handle)
        assert status.scheduled and status.next_fire_at is not None

        status = await heartbeats.delete(agent=handle, task_queue=queue, now=datetime.now(UTC))
        assert status.record is not None and status.record.state is HeartbeatState.DELETED
        assert not status.scheduled

    # Restart every process: the worker has stopped; now Temporal and PostgreSQL.
    temporal.restart()
    await asyncio.to_thread(postgres.stop)
    await asyncio.to_thread(postgres.start)
    client = await _client(stack, temporal.address)
    # What a starting worker does, and what re-running agent creation would do.
    await reconcile_heartbeats(client, settings)
    assert not await heartbeat_cli.bootstrap(client, settings, handle)

    async with autonomy_worker(client, stack, rules=RULES, task_queue=queue) as harness:
        heartbeats = Heartbeats(harness.db, client, settings.autonomy)
        status = await heartbeats.status(agent=handle)
        assert status.record is not None and status.record.state is HeartbeatState.DELETED
        assert not status.scheduled
        assert await schedules.describe(client, names.heartbeat_schedule_id(handle)) is None

        # Asleep: its reminders do not wake it either, but they are held, not lost...
        reminders = Reminders(harness.db, client, settings.autonomy)
        reminder = await reminders.create(
            agent=handle,
            objective="check the news",
            now=datetime.now(UTC),
            task_queue=queue,
            every_minutes=60,
        )
        reminder_schedule = schedules.reminder_schedule_id(reminder.reminder_id)
        await client.get_schedule_handle(reminder_schedule).trigger()
        await until(lambda: _fired(client, reminder_schedule))
        skipped = await fired_run(client, reminder_schedule)
        assert not skipped.delivered and skipped.reason == DORMANT_REASON
        assert (await heartbeats.status(agent=handle)).held_reminders == 1
        async with harness.db.session() as session:
            [held] = (await held_firings(session, agent=handle)).values()

        # ...but an inbound message wakes it for that exchange, and it stays asleep after.
        receipt = await harness.say(handle, "Are you there?")
        assert receipt.marker is not None and receipt.marker.outcome is Outcome.SPOKE
        status = await heartbeats.status(agent=handle)
        assert status.record is not None and status.record.state is HeartbeatState.DELETED

        # Restore wakes its idle cognition: the schedule is back and a beat reaches the agent.
        status = await heartbeats.restore(agent=handle, task_queue=queue, now=datetime.now(UTC))
        assert status.scheduled and status.record is not None
        assert status.record.state is HeartbeatState.ACTIVE
        # ...and the reminder held while it slept is delivered as it wakes.
        woke: FiringResult = await client.get_workflow_handle(
            wake_run_id(reminder.reminder_id, held.event_id), result_type=FiringResult
        ).result()
        assert woke.delivered and woke.event_id is not None
        assert (await impulse_receipt(harness, handle, woke.event_id)).marker is not None
        assert (await heartbeats.status(agent=handle)).held_reminders == 0
        await reminders.cancel(
            agent=handle, reminder_id=reminder.reminder_id, now=datetime.now(UTC)
        )
        await heartbeats.trigger(agent=handle)
        schedule_id = names.heartbeat_schedule_id(handle)
        await until(lambda: _fired(client, schedule_id))
        beat = await fired_run(client, schedule_id)
        assert beat.delivered and beat.event_id is not None
        receipt = await impulse_receipt(harness, handle, beat.event_id)
        assert receipt.marker is not None
        assert receipt.marker.text == "I reflected; nothing needs doing."


async def test_the_first_beat_comes_one_interval_after_creation_not_at_once(
    stack: Stack, temporal: PersistedTemporal
) -> None:
    queue = unique("tq")
    # Weekly, no jitter: an interval counted from the epoch would land on a Thursday midnight.
    weekly = {"heartbeat_interval_minutes": 7 * 24 * 60, "heartbeat_jitter_minutes": 0}
    settings = stack.settings(temporal_address=temporal.address, task_queue=queue, autonomy=weekly)
    client = await _client(stack, temporal.address)
    async with autonomy_worker(client, stack, rules=RULES, task_queue=queue) as harness:
        handle = (await harness.create_agent()).handle
        created = datetime.now(UTC)
        assert await heartbeat_cli.bootstrap(client, settings, handle)
        interval = timedelta(minutes=settings.autonomy.heartbeat_interval_minutes)
        jitter = timedelta(minutes=settings.autonomy.heartbeat_jitter_minutes)
        heartbeats = Heartbeats(harness.db, client, settings.autonomy)
        first = (await heartbeats.status(agent=handle)).next_fire_at
        assert first is not None
        # Not at the next full interval since the epoch: one whole interval after creation.
        assert created + interval - timedelta(seconds=2) <= first <= created + interval + jitter

        # A restore starts the count afresh, as does a restart reconciling the schedule.
        later = created + timedelta(minutes=7)
        await heartbeats.delete(agent=handle, task_queue=queue, now=later)
        restored = await heartbeats.restore(agent=handle, task_queue=queue, now=later)
        assert restored.next_fire_at is not None
        assert later + interval - timedelta(seconds=2) <= restored.next_fire_at
        assert restored.next_fire_at <= later + interval + jitter


async def _fired(client: Client, schedule_id: str) -> bool:
    found = await schedules.describe(client, schedule_id)
    return found is not None and bool(found.info.recent_actions)
