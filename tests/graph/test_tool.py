"""``query_graph``: a neighbourhood, a path, "as of" a past time, and an unknown name."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from activities.gateway.registry import ModelRegistry
from activities.tools.builtin.deps import ToolDeps
from activities.tools.builtin.graph import QueryGraph, QueryGraphInput
from activities.tools.registry import ToolError, ToolRun
from schemas.ids import new_ulid
from schemas.tools import ToolContext
from store.queries.graph import upsert_edge, upsert_node
from tests.harness import Harness, terminal

T0 = datetime(2026, 1, 1, tzinfo=UTC)
MOVED = T0 + timedelta(days=60)


async def _tool(harness: Harness) -> tuple[QueryGraph, ToolRun]:
    agent = (await harness.create_agent()).handle
    async with harness.db.session() as session:
        ana = await upsert_node(session, agent=agent, type="person", name="Ana", at=T0)
        acme = await upsert_node(session, agent=agent, type="organisation", name="Acme", at=T0)
        oslo = await upsert_node(session, agent=agent, type="place", name="Oslo", at=T0)
        rome = await upsert_node(session, agent=agent, type="place", name="Rome", at=T0)
        await upsert_edge(
            session, agent=agent, type="works_for", source_id=ana, target_id=acme, at=T0
        )
        await upsert_edge(
            session, agent=agent, type="based_in", source_id=acme, target_id=oslo, at=T0
        )
        await upsert_edge(
            session,
            agent=agent,
            type="based_in",
            source_id=acme,
            target_id=rome,
            at=MOVED,
            exclusive=True,
        )
        await session.commit()
    settings = harness.deps.settings
    deps = ToolDeps(db=harness.db, settings=settings, models=ModelRegistry.from_settings(settings))
    context = ToolContext(
        agent=agent,
        activation_id=new_ulid(),
        conversation_id=new_ulid(),
        channel=terminal(),
        person_id=new_ulid(),
    )
    return QueryGraph(deps), ToolRun(context=context, now=datetime.now(UTC))


async def test_query_graph_answers_now_and_as_of(harness: Harness) -> None:
    tool, run = await _tool(harness)
    now = await tool.run(run, QueryGraphInput(names=["acme"]))
    before = await tool.run(run, QueryGraphInput(names=["Acme"], as_of=MOVED - timedelta(days=1)))
    path = await tool.run(run, QueryGraphInput(names=["Ana", "Rome"]))
    assert now.mode == "neighbourhood"
    assert any("-[based_in]-> Rome (place)" in line for line in now.lines)
    assert not any("Oslo" in line for line in now.lines)
    assert any("-[based_in]-> Oslo (place)" in line for line in before.lines)
    assert path.lines == [
        "path: Ana (person) -[works_for]-> Acme (organisation) -[based_in]-> Rome (place)"
    ]


async def test_query_graph_names_what_it_does_not_know(harness: Harness) -> None:
    tool, run = await _tool(harness)
    with pytest.raises(ToolError, match="nothing called 'Atlantis' is in your graph"):
        await tool.run(run, QueryGraphInput(names=["Atlantis"]))
