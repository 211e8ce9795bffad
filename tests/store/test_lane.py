"""The driver lane: single statements on psycopg, reading what the session reads, surviving a
database that dropped its connections."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta

import psycopg
import pytest
from sqlalchemy import text

from schemas.ids import new_ulid
from store.db import Database
from store.lane import APPLICATION_NAME
from store.queries.contacts import delivered_texts
from store.queries.runtime import add_outbox, load_prompt
from store.sql import for_driver, insert_once_on
from store.tables import PromptRow
from tests.harness import Harness


async def test_the_lane_reads_what_a_session_committed_as_dicts(harness: Harness) -> None:
    db = Database(harness.db.dsn, pool_size=2)
    try:
        agent = await harness.create_agent()
        row = await db.lane.first(
            "SELECT handle, %(n)s::int AS n FROM agents WHERE handle = %(h)s",
            {"h": agent.handle, "n": 7},
        )
        assert row == {"handle": agent.handle, "n": 7}
        assert await db.lane.rows("SELECT 1 AS x WHERE false") == []
        # A statement that returns no rows is no rows, not an error.
        assert (
            await db.lane.rows("UPDATE agents SET name = name WHERE handle = %(h)s", {"h": ""})
            == []
        )
    finally:
        await db.aclose()


async def test_a_dropped_connection_fails_one_statement_and_the_next_is_served(
    harness: Harness,
) -> None:
    db = Database(harness.db.dsn, pool_size=2)
    try:
        # Two statements at once: the pool holds two connections.
        both = await asyncio.gather(
            *(db.lane.first("SELECT pg_sleep(0.2), 1 AS x") for _ in range(2))
        )
        assert [row["x"] for row in both if row] == [1, 1]
        # What a database restart does to every pooled connection.
        async with db.autocommit() as session:
            await (await session.connection()).execute(
                text(
                    "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                    "WHERE application_name = :name"
                ),
                {"name": APPLICATION_NAME},
            )
        with pytest.raises(psycopg.OperationalError):
            await db.lane.first("SELECT 2 AS x")
        # The failure dropped every dead connection, not only its own: the activity's retry is
        # served at once.
        assert await db.lane.first("SELECT 3 AS x") == {"x": 3}
    finally:
        await db.aclose()


async def test_a_closed_lane_opens_again(harness: Harness) -> None:
    db = Database(harness.db.dsn, pool_size=1)
    try:
        assert await db.lane.first("SELECT 1 AS x") == {"x": 1}
        await db.lane.close()
        assert await db.lane.first("SELECT 2 AS x") == {"x": 2}
    finally:
        await db.aclose()


async def test_delivered_texts_are_one_kind_on_one_channel_newest_first(harness: Harness) -> None:
    agent = (await harness.create_agent()).handle
    now = datetime.now(UTC)

    async def sent(
        text_: str, *, minutes_ago: float, channel: str = "terminal:here", unprompted: bool = True
    ) -> None:
        async with harness.db.session() as session:
            await add_outbox(
                session,
                message_id=new_ulid(),
                activation_id=new_ulid(),
                agent=agent,
                channel_key=channel,
                conversation_id=None,
                text_=text_,
                created_at=now - timedelta(minutes=minutes_ago),
                unprompted=unprompted,
                # Delivered already: the outbox's sweep, in tests sharing this database, has
                # nothing to deliver.
                delivered=True,
            )
            await session.commit()

    await sent("[report] too old", minutes_ago=120)
    for i in range(4):
        await sent(f"[report] {i}", minutes_ago=10 - i)
    await sent("[image] a render", minutes_ago=5)
    await sent("[report] elsewhere", minutes_ago=1, channel="terminal:there")
    await sent("[report] a reply, not on its own", minutes_ago=1, unprompted=False)

    found = await delivered_texts(
        harness.db.lane,
        agent=agent,
        channel_key="terminal:here",
        since=now - timedelta(hours=1),
        prefix="[report]",
        limit=3,
    )
    assert found == ["[report] 3", "[report] 2", "[report] 1"]


async def test_insert_once_on_the_lane_writes_json_once_and_says_so(harness: Harness) -> None:
    prompt_id = new_ulid()
    values: dict[str, object] = {
        "id": prompt_id,
        "activation_id": None,
        "task": "respond",
        "system": "You are a test agent.",
        "messages": [{"role": "user", "content": "hi \u2603"}],
        "extra": {"memory": {"records": []}},
        "token_estimate": 5,
        "created_at": datetime.now(UTC),
    }
    table = PromptRow.__table__  # type: ignore[attr-defined]
    first = await insert_once_on(harness.db.lane, table, values, key=["id"], returning="id")
    again = await insert_once_on(
        harness.db.lane, table, {**values, "system": "changed"}, key=["id"], returning="id"
    )
    assert (first, again) == (prompt_id, None)
    async with harness.db.autocommit() as session:
        stored = await load_prompt(session, prompt_id=prompt_id)
    assert stored is not None
    assert (stored.system, stored.messages, stored.extra) == (
        "You are a test agent.",
        values["messages"],
        values["extra"],
    )


async def test_settings_hold_for_their_statement_alone(harness: Harness) -> None:
    db = harness.db
    inside = await db.lane.rows_with({"work_mem": "7MB"}, "SELECT current_setting('work_mem') AS v")
    after = await db.lane.first("SELECT current_setting('work_mem') AS v")

    assert inside == [{"v": "7MB"}]
    assert after is not None and after["v"] != "7MB"


def test_text_for_the_session_is_rewritten_for_the_driver() -> None:
    statement = "SELECT x::int, CAST(:a AS text[]), '5%' FROM t WHERE b = ANY(:b_2)"
    assert for_driver(statement) == (
        b"SELECT x::int, CAST(%(a)s AS text[]), '5%%' FROM t WHERE b = ANY(%(b_2)s)"
    )
