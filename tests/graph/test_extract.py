"""Extraction after an exchange: upserts are idempotent, hostile names are cleaned, and the
model sees only the fenced exchange."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from activities.gateway.providers.scripted import ScriptRule
from activities.graph.extract import GraphActivities, apply_extraction
from schemas.graph import (
    ExtractedEntity,
    ExtractedRelation,
    ExtractGraphInput,
    GraphExtraction,
    GraphSettings,
)
from schemas.ids import new_ulid
from store.queries.dialog import conversation_turns
from store.queries.graph import nodes_named
from store.sql import execute
from tests.harness import Harness

T0 = datetime(2026, 1, 1, tzinfo=UTC)

EXTRACTION = GraphExtraction(
    entities=[
        ExtractedEntity(name="Ana", type="person"),
        ExtractedEntity(name="Oslo", type="place"),
    ],
    relations=[
        ExtractedRelation(source="Ana", relation="Lives In", target="Oslo", exclusive=True),
        ExtractedRelation(source="Ana", relation="works_for", target="Acme"),  # unlisted end
        ExtractedRelation(source="Ana", relation="knows", target="ana"),  # a self-loop: skipped
    ],
)


async def _counts(harness: Harness, agent: str) -> tuple[int, int]:
    async with harness.db.session() as session:
        result = await execute(
            session,
            "SELECT (SELECT count(*) FROM graph_nodes WHERE agent = :a),"
            " (SELECT count(*) FROM graph_edges WHERE agent = :a)",
            {"a": agent},
        )
        values = tuple(result.one())
    return int(values[0]), int(values[1])


async def test_applying_an_extraction_twice_changes_nothing_more(harness: Harness) -> None:
    agent = (await harness.create_agent()).handle
    for _ in range(2):
        async with harness.db.session() as session:
            result = await apply_extraction(
                session, agent=agent, extraction=EXTRACTION, conversation_id=None, at=T0
            )
            await session.commit()
        assert (result.nodes, result.edges) == (3, 2)
        assert await _counts(harness, agent) == (3, 2)
    async with harness.db.session() as session:
        [acme] = await nodes_named(session, agent=agent, names=["acme"])
    assert acme.type == "thing"


async def test_hostile_names_are_cleaned(harness: Harness) -> None:
    agent = (await harness.create_agent()).handle
    # A NUL never gets this far: every wire model refuses it (a model's reply that holds one
    # fails validation, and the graph step fails soft).
    with pytest.raises(ValueError, match="NUL"):
        ExtractedEntity(name="Ev\x00e", type="person")
    hostile = GraphExtraction(
        entities=[ExtractedEntity(name="Ev\u202ee\x07", type="per\x07son")],
        relations=[ExtractedRelation(source="\x07\u202e", relation="knows", target="Eve")],
    )
    async with harness.db.session() as session:
        result = await apply_extraction(
            session, agent=agent, extraction=hostile, conversation_id=None, at=T0
        )
        await session.commit()
        [eve] = await nodes_named(session, agent=agent, names=["Eve"])
    assert (eve.name, eve.type) == ("Eve", "person")
    assert (result.nodes, result.edges) == (1, 0)


async def test_the_activity_extracts_from_the_fenced_exchange(harness: Harness) -> None:
    agent = (await harness.create_agent()).handle
    receipt = await harness.say(agent, "My sister Ana moved to Oslo last spring.")
    assert receipt.marker is not None and receipt.marker.conversation_id is not None
    conversation = receipt.marker.conversation_id
    async with harness.db.session() as session:
        turns = await conversation_turns(session, conversation_id=conversation)
    harness.provider.script.rules.insert(
        0,
        ScriptRule(
            task="observe", system_match="knowledge graph", reply=EXTRACTION.model_dump_json()
        ),
    )
    activities = GraphActivities(harness.db, harness.deps.gateway, GraphSettings())
    data = ExtractGraphInput(
        agent=agent, conversation_id=conversation, turn_ids=[t.turn_id for t in turns], at=T0
    )
    first = await activities.extract(data)
    again = await activities.extract(data)
    assert (first.nodes, first.edges) == (again.nodes, again.edges) == (3, 2)
    assert await _counts(harness, agent) == (3, 2)
    [request] = [r for r in harness.provider.requests if "knowledge graph" in r.system][:1]
    assert '<material source="dialog"' in request.messages[0].content
    assert "Ana moved to Oslo" in request.messages[0].content


async def test_the_activity_does_nothing_with_the_graph_off(harness: Harness) -> None:
    agent = (await harness.create_agent()).handle
    off = GraphActivities(harness.db, harness.deps.gateway, GraphSettings(enabled=False))
    data = ExtractGraphInput(agent=agent, conversation_id=new_ulid(), turn_ids=[new_ulid()], at=T0)
    assert (await off.extract(data)).nodes == 0
    assert await _counts(harness, agent) == (0, 0)
