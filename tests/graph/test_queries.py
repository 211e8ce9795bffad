"""The graph store: neighbourhoods, shortest paths, "as of" and idempotent upserts."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from sqlmodel.ext.asyncio.session import AsyncSession

from store.queries.graph import (
    mention_keys,
    mentioned_nodes,
    mentioned_nodes_on,
    name_key,
    neighbourhood,
    neighbourhood_on,
    shortest_path,
    shortest_path_on,
    upsert_edge,
    upsert_node,
)
from store.sql import execute
from tests.harness import Harness

T0 = datetime(2026, 1, 1, tzinfo=UTC)


async def _chain(session: AsyncSession, agent: str) -> dict[str, str]:
    """Ana -knows-> Ben -works_for-> Acme -based_in-> Oslo; Cy stands apart."""
    ids = {
        name: await upsert_node(session, agent=agent, type=kind, name=name, at=T0)
        for name, kind in [
            ("Ana", "person"),
            ("Ben", "person"),
            ("Acme", "organisation"),
            ("Oslo", "place"),
            ("Cy", "person"),
        ]
    }
    for source, kind, target in [
        ("Ana", "knows", "Ben"),
        ("Ben", "works_for", "Acme"),
        ("Acme", "based_in", "Oslo"),
    ]:
        await upsert_edge(
            session, agent=agent, type=kind, source_id=ids[source], target_id=ids[target], at=T0
        )
    return ids


async def test_neighbourhood_reaches_exactly_n_hops(harness: Harness) -> None:
    agent = (await harness.create_agent()).handle
    async with harness.db.session() as session:
        ids = await _chain(session, agent)
        await session.commit()
        one = await neighbourhood(session, seeds=[ids["Ben"]], hops=1)
        two = await neighbourhood(session, seeds=[ids["Ana"]], hops=2)
    names = {n.node_id: n.name for n in one.nodes}
    assert sorted(names.values()) == ["Acme", "Ana", "Ben"]
    assert sorted(e.type for e in one.edges) == ["knows", "works_for"]
    assert sorted(n.name for n in two.nodes) == ["Acme", "Ana", "Ben"]
    assert "Oslo" not in {n.name for n in two.nodes}
    # The lane reads what the session reads.
    assert await neighbourhood_on(harness.db.lane, seeds=[ids["Ben"]], hops=1) == one
    assert await neighbourhood_on(harness.db.lane, seeds=[ids["Ana"]], hops=2) == two


async def test_neighbourhood_is_bounded_by_rows(harness: Harness) -> None:
    agent = (await harness.create_agent()).handle
    async with harness.db.session() as session:
        hub = await upsert_node(session, agent=agent, type="person", name="Hub", at=T0)
        for i in range(30):
            spoke = await upsert_node(session, agent=agent, type="thing", name=f"s{i}", at=T0)
            await upsert_edge(
                session, agent=agent, type="has", source_id=hub, target_id=spoke, at=T0
            )
        await session.commit()
        found = await neighbourhood(session, seeds=[hub], hops=2, max_edges=10)
    assert len(found.edges) == 10 and found.truncated
    assert await neighbourhood_on(harness.db.lane, seeds=[hub], hops=2, max_edges=10) == found


async def test_shortest_path_takes_the_fewest_edges(harness: Harness) -> None:
    agent = (await harness.create_agent()).handle
    async with harness.db.session() as session:
        ids = await _chain(session, agent)
        # A longer detour Ana -> Cy -> Dee -> Oslo must lose to a shortcut Ana -> Acme.
        dee = await upsert_node(session, agent=agent, type="person", name="Dee", at=T0)
        for source, target in [(ids["Ana"], ids["Cy"]), (ids["Cy"], dee), (dee, ids["Oslo"])]:
            await upsert_edge(
                session, agent=agent, type="knows", source_id=source, target_id=target, at=T0
            )
        await upsert_edge(
            session,
            agent=agent,
            type="visited",
            source_id=ids["Acme"],
            target_id=ids["Ana"],
            at=T0,
        )
        await session.commit()
        path = await shortest_path(session, source_id=ids["Ana"], target_id=ids["Oslo"])
        apart = await shortest_path(session, source_id=ids["Ben"], target_id=dee, max_hops=2)
    assert path is not None
    assert [n.name for n in path.nodes] == ["Ana", "Acme", "Oslo"]
    assert [e.type for e in path.edges] == ["visited", "based_in"]
    assert apart is None  # Ben-Ana-Cy-Dee is three hops
    lane = harness.db.lane
    assert await shortest_path_on(lane, source_id=ids["Ana"], target_id=ids["Oslo"]) == path
    assert await shortest_path_on(lane, source_id=ids["Ben"], target_id=dee, max_hops=2) is None


async def test_as_of_answers_before_and_after_an_invalidation(harness: Harness) -> None:
    agent = (await harness.create_agent()).handle
    moved = T0 + timedelta(days=30)
    async with harness.db.session() as session:
        ana = await upsert_node(session, agent=agent, type="person", name="Ana", at=T0)
        oslo = await upsert_node(session, agent=agent, type="place", name="Oslo", at=T0)
        rome = await upsert_node(session, agent=agent, type="place", name="Rome", at=moved)
        first = await upsert_edge(
            session,
            agent=agent,
            type="lives_in",
            source_id=ana,
            target_id=oslo,
            at=T0,
            exclusive=True,
        )
        second = await upsert_edge(
            session,
            agent=agent,
            type="lives_in",
            source_id=ana,
            target_id=rome,
            at=moved,
            exclusive=True,
        )
        await session.commit()
        before = await neighbourhood(session, seeds=[ana], as_of=moved - timedelta(days=1))
        now = await neighbourhood(session, seeds=[ana])
        kept = await execute(
            session,
            "SELECT invalidated_at, invalidated_by FROM graph_edges WHERE id = :id",
            {"id": first},
        )
        row = kept.one()
    assert [e.target_id for e in before.edges] == [oslo]
    assert [e.target_id for e in now.edges] == [rome]
    lane = harness.db.lane
    earlier = moved - timedelta(days=1)
    assert await neighbourhood_on(lane, seeds=[ana], as_of=earlier) == before
    then = await shortest_path_on(lane, source_id=ana, target_id=oslo, as_of=earlier)
    assert then is not None and [e.edge_id for e in then.edges] == [first]
    assert await shortest_path_on(lane, source_id=ana, target_id=oslo) is None
    # The contradicted edge stays, marked with when and by what it was replaced.
    assert (row.invalidated_at, row.invalidated_by) == (moved, second)


async def test_upserts_are_idempotent(harness: Harness) -> None:
    agent = (await harness.create_agent()).handle
    async with harness.db.session() as session:
        ids = [
            await upsert_node(
                session, agent=agent, type="person", name=name, at=T0, attributes={"n": i}
            )
            for i, name in enumerate(["Ana  Lee", "ana lee", "ANA LEE"])
        ]
        other = await upsert_node(session, agent=agent, type="place", name="Oslo", at=T0)
        edges = {
            await upsert_edge(
                session,
                agent=agent,
                type="lives_in",
                source_id=ids[0],
                target_id=other,
                at=T0,
                exclusive=True,
            )
            for _ in range(3)
        }
        await session.commit()
        counts = await execute(
            session,
            "SELECT (SELECT count(*) FROM graph_nodes WHERE agent = :a),"
            " (SELECT count(*) FROM graph_edges WHERE agent = :a AND invalidated_at IS NULL),"
            " (SELECT attributes FROM graph_nodes WHERE id = :id)",
            {"a": agent, "id": ids[0]},
        )
        row = counts.one()
    assert len(set(ids)) == 1 and len(edges) == 1
    assert tuple(row) == (2, 1, {"n": 2})


async def test_mentions_match_whole_names_longest_first(harness: Harness) -> None:
    agent = (await harness.create_agent()).handle
    async with harness.db.session() as session:
        for name in ["New York", "York", "Ann"]:
            await upsert_node(session, agent=agent, type="place", name=name, at=T0)
        await session.commit()
        found = await mentioned_nodes(
            session, agent=agent, input_text="Did Annie fly to new  York, or York?"
        )
    assert [n.name for n in found] == ["New York", "York"]  # "Annie" is not "Ann"
    on_lane = await mentioned_nodes_on(
        harness.db.lane, agent=agent, input_text="Did Annie fly to new  York, or York?", limit=1
    )
    assert on_lane == found[:1]
    assert name_key("  Ana—Lee ") == "ana lee"
    assert "o'brien" in mention_keys("Ask O'Brien.")
