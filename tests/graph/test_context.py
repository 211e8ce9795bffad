"""The graph in the prompt: the block for mentioned entities, off by setting, and fail-soft."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from sqlmodel import col, select
from temporalio.client import Client

import activities.graph.source as graph_source
from schemas.events import Outcome, Receipt
from schemas.graph import GraphSettings
from store.queries.graph import upsert_edge, upsert_node
from store.tables import PromptRow
from tests.harness import Harness, Stack, running_worker

T0 = datetime(2026, 1, 1, tzinfo=UTC)


async def _build(harness: Harness, agent: str) -> None:
    async with harness.db.session() as session:
        ids = {
            name: await upsert_node(session, agent=agent, type=kind, name=name, at=T0)
            for name, kind in [("Ben", "person"), ("Acme", "organisation"), ("Oslo", "place")]
        }
        for source, kind, target in [("Ben", "works_for", "Acme"), ("Acme", "based_in", "Oslo")]:
            await upsert_edge(
                session, agent=agent, type=kind, source_id=ids[source], target_id=ids[target], at=T0
            )
        await session.commit()


async def _system(harness: Harness, receipt: Receipt) -> str:
    assert receipt.marker is not None and receipt.marker.outcome is Outcome.SPOKE
    async with harness.db.session() as session:
        rows = await session.exec(
            select(PromptRow)
            .where(
                PromptRow.activation_id == receipt.marker.activation_id,
                PromptRow.task == "respond",
            )
            .order_by(col(PromptRow.created_at))
        )
        prompt = rows.first()
    assert prompt is not None
    return prompt.system


async def test_the_prompt_shows_how_mentioned_entities_relate(harness: Harness) -> None:
    agent = (await harness.create_agent()).handle
    await _build(harness, agent)
    system = await _system(harness, await harness.say(agent, "Is Ben still in oslo?"))
    assert '<material source="graph"' in system
    assert "Ben (person) -[works_for]-> Acme (organisation) (since 2026-01-01)" in system
    assert (
        "path: Oslo (place) <-[based_in]- Acme (organisation) <-[works_for]- Ben (person)" in system
    )


async def test_replies_flow_when_the_graph_store_fails(
    harness: Harness, monkeypatch: pytest.MonkeyPatch
) -> None:
    agent = (await harness.create_agent()).handle
    await _build(harness, agent)

    async def broken(*args: object, **kwargs: object) -> None:
        raise RuntimeError("graph store down")

    monkeypatch.setattr(graph_source, "mentioned_nodes_on", broken)
    system = await _system(harness, await harness.say(agent, "How is Ben?"))
    assert 'source="graph"' not in system


async def test_the_setting_turns_the_graph_off(client: Client, stack: Stack) -> None:
    async with running_worker(
        client, stack, settings_overrides={"graph": GraphSettings(enabled=False)}
    ) as harness:
        agent = (await harness.create_agent()).handle
        await _build(harness, agent)
        system = await _system(harness, await harness.say(agent, "Is Ben still in Oslo?"))
    assert 'source="graph"' not in system
