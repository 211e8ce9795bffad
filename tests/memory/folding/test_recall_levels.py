"""Recall over levels: at a tight budget a folded month is one level-3 line where unfolded it
was two days; drilling down reaches every level-1 record; a strong match stays itself;
forgetting a folded record dissolves the recollections that retell it."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import text
from temporalio.client import Client

from activities.context.assembler import fit
from activities.gateway.providers.scripted import ScriptRule
from activities.memory.recall import MemoryBlock, MemoryRecall
from activities.memory.remember import NotARecollectionError, drill_down, remember_harder
from contract import names
from schemas.folding import FoldingInput
from schemas.memory import MemorySettings
from schemas.recall import SurfacedMemories
from store.queries.folding import ready_batches
from store.queries.memory import forget
from tests.harness import Harness, Stack, running_worker
from tests.memory.folding.month import CHANNEL, DAYS, DOG, START, Month, live_a_month
from workflows.folding import FoldingWorkflow

RECOLLECTION = "That month I helped Max turn his garden into beds of tomatoes and beans."
RULES = [ScriptRule(task="fold", reply=json.dumps({"summary": RECOLLECTION}))]
BROAD = "What have Max and I been up to in the garden lately?"
NOW = START + timedelta(days=DAYS + 1)
TIGHT = 200
"""Tokens for the memory block: its header (about 105, and 45 more to explain levels) and
three lines of a day, or one recollection."""


async def _fold(client: Client, harness: Harness, agent: str) -> None:
    await client.execute_workflow(
        FoldingWorkflow.run,
        FoldingInput(agent=agent),
        id=names.folding_workflow_id(agent),
        task_queue=harness.task_queue,
    )


async def _recall(
    harness: Harness, agent: str, month: Month, query: str, settings: MemorySettings
) -> SurfacedMemories:
    assert harness.deps.encoder is not None
    recall = MemoryRecall(harness.db, harness.deps.encoder, settings)
    found = await recall.recall(
        agent=agent,
        channel_key=CHANNEL.key,
        present=[month.person],
        query=query,
        now=NOW,
        context_window=8000,
    )
    assert found is not None
    return found


def _tight(found: SurfacedMemories) -> MemoryBlock:
    block = MemoryBlock(surfaced=found, share=1.0, timezone="UTC")
    fit([block], budget=TIGHT, window=TIGHT)
    return block


async def test_a_tight_budget_holds_the_month_as_one_recollection_then_drills_down(
    client: Client, stack: Stack
) -> None:
    # No match is strong here: every one is shown through what it was folded into.
    settings = MemorySettings(recall_band_strong=0.99, recall_band_moderate=0.98)
    async with running_worker(client, stack, rules=RULES) as harness:
        agent = (await harness.create_agent()).handle
        month = await live_a_month(harness.db, harness.deps.encoder, agent=agent)

        before = _tight(await _recall(harness, agent, month, BROAD, settings)).shown()
        assert before and len(before) <= 3 and all(m.level == 1 for m in before)

        await _fold(client, harness, agent)
        found = await _recall(harness, agent, month, BROAD, settings)
        [top] = found.records  # the whole month, one line
        assert top.level == 3 and top.summary == RECOLLECTION
        assert (top.first_at, top.last_at) == (
            START - timedelta(minutes=30),
            START + timedelta(days=DAYS - 1),
        )
        assert set(top.matched) >= set(month.records[:3])
        [line] = _tight(found).items
        assert "recollection, level 3" in line and "2026-10-01 to 2026-11-05" in line

        # On request: one level down, then to the records of dialog, then their detail.
        middle = await drill_down(harness.db, agent=agent, record_id=top.id)
        assert [r.level for r in middle.beneath] == [2] * (DAYS // 6)
        days = await drill_down(harness.db, agent=agent, record_id=top.id, to_level=1)
        assert [r.id for r in days.beneath] == month.records
        assert DOG in [r.summary for r in days.beneath]
        harder = await remember_harder(harness.db, agent=agent, record_id=top.id)
        assert [r.id for r in harder.beneath] == month.records and harder.turns == []
        assert harder.note is not None and "recollection" in harder.note
        with pytest.raises(NotARecollectionError, match="remember it harder"):
            await drill_down(harness.db, agent=agent, record_id=month.records[0])
        # Another conversation's people cannot drill into it.
        with pytest.raises(LookupError, match="cannot be recalled"):
            await drill_down(
                harness.db,
                agent=agent,
                record_id=top.id,
                channel=CHANNEL,
                participants=["01JZZZZZZZZZZZZZZZZZZZZZZZ"],
            )


async def test_a_strong_match_is_shown_as_itself_beside_its_recollection(
    client: Client, stack: Stack
) -> None:
    async with running_worker(client, stack, rules=RULES) as harness:
        agent = (await harness.create_agent()).handle
        month = await live_a_month(harness.db, harness.deps.encoder, agent=agent)
        await _fold(client, harness, agent)
        found = await _recall(harness, agent, month, DOG, MemorySettings())
        first = found.records[0]
        assert (first.level, first.summary) == (1, DOG)
        # The rest of the month is still there, as recollections, each once.
        ids = [m.id for m in found.records]
        assert len(ids) == len(set(ids))
        assert any(m.level > 1 for m in found.records)


async def test_forgetting_a_folded_record_dissolves_what_retells_it(
    client: Client, stack: Stack
) -> None:
    async with running_worker(client, stack, rules=RULES) as harness:
        agent = (await harness.create_agent()).handle
        month = await live_a_month(harness.db, None, agent=agent)
        await _fold(client, harness, agent)
        async with harness.db.session() as session:
            result = await forget(
                session,
                record_id=month.records[16],
                actor="operator:test",
                reason="asked to",
                now=datetime.now(UTC),
            )
        assert result is not None and len(result.dissolved) == 2  # its level 2, then the top
        async with harness.db.session() as session:
            rows = (
                await (await session.connection()).execute(
                    text(
                        "SELECT id, level, folded_into, forgotten_at, summary FROM memory_records "
                        "WHERE agent = :a ORDER BY level, id"
                    ),
                    {"a": agent},
                )
            ).all()
            ready = await ready_batches(session, agent=agent, threshold=6, levels=3, limit=10)
        gone = {r.id for r in rows if r.forgotten_at is not None}
        assert gone == {month.records[16], *result.dissolved}
        assert all(r.summary == "" for r in rows if r.id in gone)  # retold text erased too
        # Nothing live points at a forgotten recollection: its records fold again.
        assert not any(r.folded_into in gone for r in rows if r.forgotten_at is None)
        # Forgetting a recollection itself frees what it folded, too.
        live = next(r for r in rows if r.level == 2 and r.forgotten_at is None)
        async with harness.db.session() as session:
            await forget(session, record_id=live.id, actor="test", reason=None, now=NOW)
            freed = (
                await (await session.connection()).execute(
                    text("SELECT count(*) FROM memory_records WHERE folded_into = :id"),
                    {"id": live.id},
                )
            ).scalar_one()
        assert freed == 0
        # Five days of its six remain, and five level-2s: not yet enough to fold again.
        assert ready == []
