"""No loop survives a restart of every process mid-conversation: the budget still bounds it.

Two agents that would talk forever, served by a real worker process on a Temporal dev server
that keeps its state in SQLite. In mid-conversation the worker is killed, Temporal and
PostgreSQL are restarted, and a new worker takes over: the exchange resumes where it was and
still ends on the budget spent before the restart (model tokens from the usage ledger, so
nothing refills it), and no message reaches its recipient twice.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from sqlmodel import col, func, select
from sqlmodel.ext.asyncio.session import AsyncSession
from temporalio.client import Client

from schemas.agents import AgentCreate
from schemas.delivery import DeliveryStatus
from schemas.peers import agent_channel
from store.db import Database
from store.embedded import EmbeddedPostgres
from store.queries.agents import create_agent
from store.tables import DialogTurnRow, OutboxRow, UsageRow
from temporal import inbox, search_attributes
from temporal.client import connect
from temporal.devserver import DevServer, free_port
from tests.harness import Stack, unique, until
from tests.workflows.test_faults import WorkerProcess
from usecases.peers import StopReason, follow_conversation, start_conversation

BUDGET = 20_000
"""Model tokens per agent and channel: a few replies each on the scripted model."""
SCRIPT = {
    "rules": [
        {"task": "respond", "match": "moon", "reply": "Volcanoes build islands from molten rock."},
        {"task": "respond", "match": "volcanoes", "reply": "The moon pulls tides across oceans."},
    ]
}
PACING_ENV = {
    "PERSYN_PACING__BUDGET_TOKENS": str(BUDGET),
    "PERSYN_PACING__MIN_INTERVAL_SECONDS": "0.3",
    "PERSYN_PACING__LISTEN_SECONDS": "0.2",
    "PERSYN_PACING__JITTER_SECONDS": "0.3",
}


async def _delivered(db: Database, handles: list[str]) -> int:
    async with db.session() as session:
        return int(
            (
                await session.exec(
                    select(func.count())
                    .select_from(OutboxRow)
                    .where(
                        col(OutboxRow.agent).in_(handles),
                        OutboxRow.status == DeliveryStatus.DELIVERED,
                    )
                )
            ).one()
        )


async def test_a_conversation_survives_a_restart_of_everything_and_the_budget_still_ends_it(
    stack: Stack, postgres: EmbeddedPostgres, tmp_path: Path
) -> None:
    server = DevServer(
        port=free_port(),
        ui_port=None,
        db_file=tmp_path / "temporal.db",
        log_file=tmp_path / "t.log",
    )
    process = server.start(detached=False)
    address = f"127.0.0.1:{server.port}"
    settings = stack.settings(temporal_address=address)
    script = tmp_path / "script.json"
    script.write_text(json.dumps(SCRIPT))
    queue = unique("tq-restart")
    workers: list[WorkerProcess] = []

    def new_worker(name: str) -> WorkerProcess:
        worker = WorkerProcess(stack, queue, script, tmp_path / f"{name}.log")
        worker.env.update({"PERSYN_TEMPORAL_ADDRESS": address, **PACING_ENV})
        workers.append(worker)
        worker.start()
        return worker

    db = Database(stack.dsn, pool_size=2)
    client: Client | None = None
    try:
        client = await connect(settings, address=address, ready_within=20)
        await search_attributes.register(client)
        handles = [unique("ada"), unique("bo")]
        async with db.session() as session:
            for handle in handles:
                await create_agent(
                    session, spec=AgentCreate(handle=handle, name=handle, persona="Talkative.")
                )
        first = new_worker("worker1")
        connected = client
        await until(lambda: inbox.has_pollers(connected, queue))
        opening = await start_conversation(
            settings=settings,
            client=client,
            first=handles[0],
            second=handles[1],
            opening="Think about the moon tonight.",
            task_queue=queue,
        )
        await until(lambda: _delivered(db, handles), timeout=60)
        await until(lambda: _at_least(db, handles, 3), timeout=90)

        # Everything goes down mid-conversation and comes back.
        first.kill()
        process.terminate()
        process.wait(10)
        await asyncio.to_thread(postgres.stop)
        await asyncio.to_thread(postgres.start)
        process = server.start(detached=False)
        new_worker("worker2")
        # The pool's connections died with the server: open a fresh one.
        await db.aclose()
        db = Database(stack.dsn, pool_size=2)

        events = [
            e async for e in follow_conversation(settings=settings, opening_id=opening, timeout=180)
        ]
        end = events[-1]
        assert end.stopped is StopReason.BLOCKED, await _dump(db, handles, events)
        assert end.reason is not None and "token budget exhausted" in end.reason

        async with db.session() as session:
            for sender, recipient in (handles, handles[::-1]):
                sent = list(
                    await session.exec(
                        select(OutboxRow).where(
                            OutboxRow.agent == sender,
                            OutboxRow.channel_key == agent_channel(recipient).key,
                        )
                    )
                )
                spent = await _spent(session, sender, recipient)
                # Within the budget but for the one exchange afforded before it ran out.
                assert spent and sum(spent.values()) - max(spent.values()) < BUDGET
                delivered = [row for row in sent if row.status == DeliveryStatus.DELIVERED]
                heard = (
                    await session.exec(
                        select(func.count())
                        .select_from(DialogTurnRow)
                        .where(DialogTurnRow.agent == recipient, DialogTurnRow.role == "person")
                    )
                ).one()
                # Each delivered message became exactly one turn of its recipient.
                assert heard == len(delivered)
    finally:
        for worker in workers:
            worker.stop()
        client = None
        await db.aclose()
        process.terminate()
        process.wait(10)


async def _spent(session: AsyncSession, sender: str, recipient: str) -> dict[str, int]:
    """Model tokens per activation of ``sender`` on its channel to ``recipient``."""
    spent: dict[str, int] = {}
    rows = await session.exec(
        select(UsageRow).where(
            UsageRow.agent == sender, UsageRow.channel == agent_channel(recipient).key
        )
    )
    for row in rows:
        key = str(row.activation)
        spent[key] = spent.get(key, 0) + row.input_tokens + row.output_tokens
    return spent


async def _at_least(db: Database, handles: list[str], count: int) -> bool:
    return await _delivered(db, handles) >= count


async def _dump(db: Database, handles: list[str], events: object) -> str:
    """What the outbox holds, for a failure message."""
    async with db.session() as session:
        rows = await session.exec(
            select(OutboxRow)
            .where(col(OutboxRow.agent).in_(handles))
            .order_by(col(OutboxRow.created_at))
        )
        lines = [f"{r.id} {r.agent} {r.status} {r.tokens} {r.last_error} {r.text}" for r in rows]
    return "\n".join([repr(events), *lines])
