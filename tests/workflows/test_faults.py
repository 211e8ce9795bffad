"""Faults: a worker killed mid-activation, PostgreSQL restarted under load.

Whatever fails, the agent keeps going: no input is lost and no reply is sent twice.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlmodel import col, func, select
from temporalio.client import Client

from activities.gateway.providers.scripted import ScriptRule
from schemas.events import Outcome, Receipt
from store.embedded import EmbeddedPostgres
from store.tables import DialogTurnRow, OutboxRow, PromptRow
from temporal import inbox
from tests.harness import Harness, Stack, event, running_worker, unique, until


class WorkerProcess:
    """A real worker process (``python -m workers.main``) that a test can kill."""

    def __init__(self, stack: Stack, queue: str, script: Path, log: Path) -> None:
        self.env = {
            **os.environ,
            "PERSYN_HOME": str(stack.home),
            "PERSYN_TEMPORAL_ADDRESS": stack.temporal_address,
            "PERSYN_DATABASE_URL": stack.dsn,
            "PERSYN_PROVIDER": "scripted",
            "PERSYN_SCRIPTED_SCRIPT": str(script),
            "PERSYN_TASK_QUEUE": queue,
        }
        self.log = log
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        with self.log.open("ab") as out:
            self.process = subprocess.Popen(
                [sys.executable, "-m", "workers.main"], env=self.env, stdout=out, stderr=out
            )

    def kill(self) -> None:
        assert self.process is not None
        self.process.send_signal(signal.SIGKILL)
        self.process.wait(10)

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(20)
            except subprocess.TimeoutExpired:
                self.process.kill()


@pytest.fixture
def worker_processes(stack: Stack) -> Iterator[list[WorkerProcess]]:
    started: list[WorkerProcess] = []
    yield started
    for worker in started:
        worker.stop()


async def test_a_worker_killed_mid_activation_loses_nothing_and_replies_once(
    client: Client, stack: Stack, worker_processes: list[WorkerProcess], tmp_path: Path
) -> None:
    # The model takes 3 s, so the kill lands while the reply is being generated.
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"rules": [{"delay_ms": 3000, "reply": "survived: {last}"}]}))
    queue = unique("tq-kill")
    first = WorkerProcess(stack, queue, script, tmp_path / "worker1.log")
    second = WorkerProcess(stack, queue, script, tmp_path / "worker2.log")
    worker_processes.extend([first, second])

    # An in-process harness only to create the agent and submit; it polls another queue.
    async with running_worker(client, stack) as harness:
        agent = await harness.create_agent()
        first.start()
        await until(lambda: inbox.has_pollers(client, queue))
        submission = asyncio.create_task(
            _submit_on(harness, queue, agent.handle, "are you still there?")
        )

        async def prompt_stored() -> bool:
            # Context assembly stored the prompt: generation is under way.
            async with harness.db.session() as session:
                rows = await session.exec(
                    select(func.count())
                    .select_from(PromptRow)
                    .where(col(PromptRow.system).contains(f"handle: {agent.handle}"))
                )
                return int(rows.one()) > 0

        await until(prompt_stored)
        first.kill()
        second.start()
        receipt = await asyncio.wait_for(submission, 120)

        assert receipt.marker is not None
        assert receipt.marker.outcome is Outcome.SPOKE
        assert receipt.marker.text == "survived: are you still there?"
        async with harness.db.session() as session:
            replies = (
                await session.exec(
                    select(DialogTurnRow).where(
                        DialogTurnRow.agent == agent.handle, DialogTurnRow.role == "agent"
                    )
                )
            ).all()
            outbox = (
                await session.exec(select(OutboxRow).where(OutboxRow.agent == agent.handle))
            ).all()
        assert len(replies) == 1
        assert len(outbox) == 1


async def _submit_on(harness: Harness, queue: str, handle: str, text: str) -> Receipt:
    return await inbox.submit(harness.client, handle=handle, event=event(text), task_queue=queue)


async def test_postgres_restarted_under_load_loses_nothing(
    client: Client, stack: Stack, postgres: EmbeddedPostgres
) -> None:
    rules = [ScriptRule(delay_ms=200, reply="ack: {last}")]
    async with running_worker(client, stack, rules=rules) as harness:
        agents = [await harness.create_agent() for _ in range(3)]
        messages = {a.handle: [f"{a.handle} message {i}" for i in range(3)] for a in agents}

        async def talk(handle: str) -> list[Receipt]:
            return [await harness.say(handle, text) for text in messages[handle]]

        load = asyncio.gather(*(talk(a.handle) for a in agents))
        await until(lambda: harness.provider.requests)  # traffic is flowing
        await asyncio.to_thread(postgres.stop)
        await asyncio.sleep(1.0)  # the outage itself
        await asyncio.to_thread(postgres.start)
        results = await asyncio.wait_for(load, 180)

        async with harness.db.session() as session:
            for agent, receipts in zip(agents, results, strict=True):
                assert all(
                    r.marker is not None and r.marker.outcome is Outcome.SPOKE for r in receipts
                )
                replies = (
                    await session.exec(
                        select(DialogTurnRow.text).where(
                            DialogTurnRow.agent == agent.handle, DialogTurnRow.role == "agent"
                        )
                    )
                ).all()
                assert sorted(replies) == sorted(f"ack: {m}" for m in messages[agent.handle])
                sent = (
                    await session.exec(
                        select(func.count())
                        .select_from(OutboxRow)
                        .where(OutboxRow.agent == agent.handle)
                    )
                ).one()
                assert sent == 3
