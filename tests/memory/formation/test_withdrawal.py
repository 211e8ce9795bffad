"""``persyn memory list|show|forget|cull`` as an operator runs them."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from typer.testing import CliRunner

from cli.main import app
from contract.names import maintenance_schedule_id
from schemas.events import ChannelRef
from schemas.ids import new_ulid
from schemas.settings import get_settings
from store.db import Database
from store.queries.memory import NewRecord, insert_record
from store.queries.people import ensure_channel
from store.queries.recall import Fence, lexical_candidates, semantic_candidates
from temporal.client import connect
from tests.harness import Stack, unique
from tests.memory.formation.helpers import new_agent, rows

runner = CliRunner()
CHANNEL = ChannelRef(service="terminal", channel="operator")


@dataclass
class Seeded:
    agent: str
    channel_id: str
    root: str
    child: str
    grandchild: str
    vector: list[float]


@pytest.fixture
def settings_env(stack: Stack, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setenv("PERSYN_HOME", str(stack.home))
    monkeypatch.setenv("PERSYN_DATABASE_URL", stack.dsn)
    monkeypatch.setenv("PERSYN_TEMPORAL_ADDRESS", stack.temporal_address)
    get_settings.cache_clear()
    yield
    get_settings.cache_clear()


def unit(slot: int) -> list[float]:
    vector = [0.0] * 384
    vector[slot] = 1.0
    return vector


def seed(dsn: str) -> Seeded:
    """A root memory, one derived from it, and one derived from both."""

    async def make() -> Seeded:
        db = Database(dsn)
        agent = await new_agent(db)
        now = datetime.now(UTC)
        ids = [new_ulid() for _ in range(3)]
        async with db.session() as session:
            channel_id = await ensure_channel(session, agent=agent, channel=CHANNEL, seen_at=now)
            for number, (record_id, derived) in enumerate(
                zip(ids, [[], ids[:1], ids[:2]], strict=True)
            ):
                await insert_record(
                    session,
                    record=NewRecord(
                        id=record_id,
                        agent=agent,
                        channel_id=channel_id,
                        conversation_id=None,
                        summary=f"I remember memory number {number}, about the garden.",
                        importance=5 + number,
                        created_at=now - timedelta(minutes=10 - number),
                        derived_from=derived,
                        embedding=unit(number),
                        embed_model="test-model",
                    ),
                )
            await session.commit()
        await db.aclose()
        return Seeded(agent, channel_id, ids[0], ids[1], ids[2], unit(0))

    return asyncio.run(make())


def visible(dsn: str, seeded: Seeded) -> tuple[set[str], set[str]]:
    """What recall's fenced queries return (lexically, and nearest to the root's vector)."""

    async def look() -> tuple[set[str], set[str]]:
        db = Database(dsn)
        fence = Fence(agent=seeded.agent, channel_ids=[seeded.channel_id], present=[])
        async with db.session() as session:
            lexical = await lexical_candidates(session, fence, lexemes=["garden"], limit=10)
        async with db.session() as session:
            nearest = await semantic_candidates(
                session, fence, vector=seeded.vector, model="test-model", limit=10, ef_search=40
            )
        await db.aclose()
        return {c.id for c in lexical}, {c.id for c in nearest}

    return asyncio.run(look())


def invoke(*args: str) -> tuple[int, str, str]:
    result = runner.invoke(app, list(args))
    return result.exit_code, result.stdout, result.stderr


def test_forget_withdraws_a_memory_audits_it_and_names_what_derived_from_it(
    stack: Stack, settings_env: None
) -> None:
    seeded = seed(stack.dsn)
    assert visible(stack.dsn, seeded)[0] == {seeded.root, seeded.child, seeded.grandchild}

    code, out, err = invoke(
        "memory", "forget", seeded.root, "--reason", "asked to forget the garden", "--by", "ops"
    )
    assert code == 0, err
    assert f"forgot {seeded.root}" in out
    assert "2 memories derive from it and were kept" in out
    assert seeded.child in out and seeded.grandchild in out

    lexical, nearest = visible(stack.dsn, seeded)
    assert seeded.root not in lexical and seeded.root not in nearest
    assert {seeded.child, seeded.grandchild} <= lexical
    state = rows_sync(
        stack.dsn,
        "SELECT id, forgotten_at IS NOT NULL AS gone, embedding IS NULL AS bare "
        "FROM memory_records WHERE agent = :a ORDER BY id",
        a=seeded.agent,
    )
    assert {(s.id, s.gone, s.bare) for s in state} == {
        (seeded.root, True, True),
        (seeded.child, False, False),
        (seeded.grandchild, False, False),
    }
    (audit,) = rows_sync(
        stack.dsn, "SELECT * FROM memory_audit WHERE record_id = :r", r=seeded.root
    )
    assert (audit.action, audit.actor, audit.reason) == (
        "forget",
        "ops",
        "asked to forget the garden",
    )
    # The audit keeps who, when and why; the text is erased everywhere.
    assert audit.summary is None
    assert "garden" not in json.dumps(audit.snapshot)
    (erased,) = rows_sync(
        stack.dsn, "SELECT summary FROM memory_records WHERE id = :r", r=seeded.root
    )
    assert erased.summary == ""
    assert audit.derived == [seeded.child, seeded.grandchild]
    assert audit.snapshot["importance"] == 5

    # Forgetting twice changes nothing and says so.
    code, out, _ = invoke("memory", "forget", seeded.root)
    assert code == 0 and "already forgotten" in out and "by ops" in out
    assert (
        len(rows_sync(stack.dsn, "SELECT 1 FROM memory_audit WHERE record_id = :r", r=seeded.root))
        == 1
    )


def test_list_hides_forgotten_memories_unless_asked_and_show_tells_the_whole_story(
    stack: Stack, settings_env: None
) -> None:
    seeded = seed(stack.dsn)
    code, out, _ = invoke("memory", "list", "--agent", seeded.agent)
    assert code == 0 and all(i in out for i in (seeded.root, seeded.child, seeded.grandchild))
    assert invoke("memory", "forget", seeded.root)[0] == 0

    code, out, _ = invoke("memory", "list", "--agent", seeded.agent, "--json")
    listed = json.loads(out)
    assert code == 0 and [r["id"] for r in listed] == [seeded.grandchild, seeded.child]
    assert {r["channel_key"] for r in listed} == {CHANNEL.key}
    code, out, _ = invoke("memory", "list", "--agent", seeded.agent, "--all")
    assert code == 0 and f"{seeded.root}" in out and "[forgotten]" in out
    code, out, _ = invoke("memory", "list", "--agent", seeded.agent, "--channel", "web:nowhere")
    assert code == 0 and "no memories" in out

    code, out, _ = invoke("memory", "show", seeded.root)
    assert code == 0 and "forgotten" in out and "forget by" in out
    assert f"derived:      {seeded.child}" in out
    code, out, _ = invoke("memory", "show", seeded.grandchild.lower(), "--json")
    shown = json.loads(out)
    assert code == 0 and shown["derived_from"] == [seeded.root, seeded.child]
    assert shown["record"]["importance"] == 7 and shown["embedded"] is True


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["memory", "show", "not-a-ulid"], "memory id 'not-a-ulid' is not a ULID"),
        (["memory", "forget", "01ARZ3NDEKTSV4RRFFQ69G5FA"], "is not a ULID"),
        (["memory", "show", "01ARZ3NDEKTSV4RRFFQ69G5FAV"], "there is no memory"),
        (["memory", "forget", "01ARZ3NDEKTSV4RRFFQ69G5FAV"], "there is no memory"),
        (["memory", "forget", "01ARZ3NDEKTSV4RRFFQ69G5FAV", "--reason", " "], "reason is empty"),
        (["memory", "list", "--agent", "Not A Handle"], "agent handle 'Not A Handle' is invalid"),
        (["memory", "list", "--agent", "nobody-here"], "there is no agent 'nobody-here'"),
        (["memory", "cull", "--agent", "nobody-here", "--dry-run"], "there is no agent"),
    ],
)
def test_bad_ids_and_handles_get_one_line(
    args: list[str], message: str, settings_env: None
) -> None:
    code, out, err = invoke(*args)
    assert code == 1 and out == ""
    assert err.startswith("error: ") and message in err and err.count("\n") == 1


def test_cull_dry_run_shows_what_would_go_and_deletes_nothing(
    stack: Stack, settings_env: None
) -> None:
    seeded = seed(stack.dsn)
    rows_sync(
        stack.dsn,
        "UPDATE memory_records SET importance = 1, created_at = now() - interval '30 days' "
        "WHERE id = :id RETURNING id",
        id=seeded.child,
    )
    code, out, _ = invoke("memory", "cull", "--agent", seeded.agent, "--dry-run")
    assert code == 0 and "would cull 1 memories" in out and seeded.child in out
    assert (
        len(rows_sync(stack.dsn, "SELECT 1 FROM memory_records WHERE agent = :a", a=seeded.agent))
        == 3
    )

    code, out, _ = invoke("memory", "cull", "--agent", seeded.agent)
    assert code == 0 and "culled 1 memories" in out
    left = rows_sync(stack.dsn, "SELECT id FROM memory_records WHERE agent = :a", a=seeded.agent)
    assert {r.id for r in left} == {seeded.root, seeded.grandchild}
    # A culled record is gone, but its audit entry still shows it.
    code, out, _ = invoke("memory", "show", seeded.child)
    assert code == 0 and "culled" in out and "memory number 1" not in out
    assert "(erased when it was withdrawn)" in out
    assert "cull by operator:" in out


def test_agent_create_ensures_its_maintenance_schedule(stack: Stack, settings_env: None) -> None:
    handle = unique("sched")[:32]
    code, _, err = invoke("agent", "create", handle, "--name", "Sched", "--persona", "Tidy.")
    assert code == 0, err

    async def check() -> str:
        client = await connect(get_settings())
        schedule = client.get_schedule_handle(maintenance_schedule_id(handle))
        described = await schedule.describe()
        await schedule.delete()
        return str(described.schedule.action.workflow)  # type: ignore[attr-defined]

    assert asyncio.run(check()) == "MaintenanceWorkflow"


def rows_sync(dsn: str, sql: str, **params: object) -> list[Any]:
    async def go() -> list[Any]:
        db = Database(dsn)
        try:
            return await rows(db, sql, **params)
        finally:
            await db.aclose()

    return asyncio.run(go())
