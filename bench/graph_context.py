"""Cost of the knowledge graph on the reply's path: context assembly with it on against off.

One agent holds ``--edges`` relations (default 50,000) among 10,000 entities, loaded with
COPY: degrees are skewed (a few hub entities hold many relations, as a person's partner or
home town would), and one edge in ten has been invalidated by a later one. Each input mentions
0-3 known entities among filler words. The same inputs are assembled by a
``ContextAssembler`` with the built-in sources (persona, constraints, clock, dialog) and again
with the graph source added; the sources run concurrently, so the difference of the medians
is what the graph adds to a reply. The graph source's own time is reported too.

Usage: ``python -m bench.graph_context [--edges 50000] [--inputs 300] [--no-record]``
"""

from __future__ import annotations

import argparse
import asyncio
import io
import os
import random
import tempfile
import time
from datetime import UTC, datetime, timedelta
from itertools import combinations
from pathlib import Path

import psycopg

from activities.context.assembler import ContextAssembler
from activities.context.model import ContextRequest, ContextSource
from activities.context.sources import ClockSource, ConstraintsSource, DialogSource, PersonaSource
from activities.gateway.registry import ModelRegistry
from activities.graph.source import MAX_PATHS, PATH_HOPS, GraphSource
from bench.harness import percentile, record
from schemas.activation import AssembleContextInput
from schemas.agents import AgentCreate
from schemas.events import ChannelRef, InboundEvent, Speaker
from schemas.graph import GraphSettings
from schemas.ids import new_ulid
from schemas.settings import Settings
from store.db import Database
from store.embedded import EmbeddedPostgres
from store.migrate import upgrade
from store.queries.agents import create_agent, get_agent
from store.queries.graph import mentioned_nodes, name_key, neighbourhood, shortest_path
from temporal.devserver import free_port

AGENT = "bench-graph"
NODES = 10_000
KINDS = ["person", "place", "organisation", "thing"]
RELATIONS = ["knows", "lives_in", "works_for", "likes", "owns", "visited", "member_of"]
FILLER = "so what do you think about the plan for next week and how it went".split()  # noqa: SIM905


def _names(rng: random.Random) -> list[str]:
    syllables = ["ka", "lo", "mi", "ren", "sa", "tor", "vel", "bri", "dun", "ax", "eo", "quin"]
    names: set[str] = set()
    while len(names) < NODES:
        words = rng.choice([1, 1, 2])
        names.add(
            " ".join(
                "".join(rng.choice(syllables) for _ in range(rng.randint(2, 3))).title()
                for _ in range(words)
            )
        )
    return sorted(names)


def load(dsn: str, edges: int, rng: random.Random) -> tuple[list[str], float]:
    """COPY the graph in; returns the entity names and seconds taken."""
    started = time.perf_counter()
    t0 = datetime(2025, 1, 1, tzinfo=UTC)
    names = _names(rng)
    ids = [new_ulid() for _ in names]
    nodes = io.StringIO()
    for node_id, name in zip(ids, names, strict=True):
        nodes.write(f"{node_id}\t{AGENT}\t{rng.choice(KINDS)}\t{name}\t{name_key(name)}\t{{}}\t")
        nodes.write(f"{t0.isoformat()}\t{t0.isoformat()}\n")
    # Skewed degrees: the first 1% of entities are hubs drawn four times as often as the rest.
    weights = [40 if i < NODES // 100 else 1 for i in range(NODES)]
    seen: set[tuple[int, str, int]] = set()
    rows = io.StringIO()
    while len(seen) < edges:
        source, target = rng.choices(range(NODES), weights=weights, k=2)
        relation = rng.choice(RELATIONS)
        if source == target or (source, relation, target) in seen:
            continue
        seen.add((source, relation, target))
        at = t0 + timedelta(minutes=len(seen))
        ended = "\\N\t\\N"
        if rng.random() < 0.1:  # contradicted later, kept as history
            ended = f"{(at + timedelta(days=30)).isoformat()}\t{new_ulid()}"
        rows.write(
            f"{new_ulid()}\t{AGENT}\t{relation}\t{ids[source]}\t{ids[target]}\t\\N\t"
            f"{at.isoformat()}\t{ended}\n"
        )
    with (
        psycopg.connect(dsn.replace("postgresql+psycopg://", "postgresql://")) as conn,
        conn.cursor() as cur,
    ):
        with cur.copy(
            "COPY graph_nodes (id, agent, type, name, name_key, attributes, created_at,"
            " updated_at) FROM STDIN"
        ) as copy:
            copy.write(nodes.getvalue())
        with cur.copy(
            "COPY graph_edges (id, agent, type, source_id, target_id, conversation_id,"
            " valid_from, invalidated_at, invalidated_by) FROM STDIN"
        ) as copy:
            copy.write(rows.getvalue())
        cur.execute("ANALYZE graph_nodes")
        cur.execute("ANALYZE graph_edges")
    return names, time.perf_counter() - started


def inputs(names: list[str], count: int, rng: random.Random) -> list[str]:
    """Messages mentioning 0-3 known entities among filler words."""
    texts = []
    for _ in range(count):
        words = rng.sample(FILLER, 8)
        for name in rng.sample(names, rng.choice([0, 1, 1, 2, 2, 3])):
            words.insert(rng.randrange(len(words)), name)
        texts.append(" ".join(words))
    return texts


def _data(text: str) -> AssembleContextInput:
    return AssembleContextInput(
        activation_id=new_ulid(),
        agent=AGENT,
        conversation_id=new_ulid(),
        channel=ChannelRef(service="terminal", channel="bench"),
        event=InboundEvent(
            event_id=new_ulid(),
            channel=ChannelRef(service="terminal", channel="bench"),
            speaker=Speaker(speaker_id="ada"),
            text=text,
        ),
        person_id=new_ulid(),
        now=datetime.now(UTC),
    )


async def _create_agent(dsn: str) -> None:
    db = Database(dsn)
    async with db.session() as session:
        await create_agent(
            session, spec=AgentCreate(handle=AGENT, name="Bench", persona="A bench agent.")
        )
    await db.aclose()


async def _parts(db: Database, text: str, hops: int, times: dict[str, list[float]]) -> None:
    """The graph source's steps timed apart (each in its own session, as the source runs)."""
    async with db.session() as session:
        started = time.perf_counter()
        found = await mentioned_nodes(session, agent=AGENT, input_text=text, limit=6)
        times["  mentions"].append((time.perf_counter() - started) * 1000)
        seeds = [n.node_id for n in found]
        started = time.perf_counter()
        await neighbourhood(session, seeds=seeds, hops=hops, max_edges=30)
        times["  neighbourhood"].append((time.perf_counter() - started) * 1000)
        started = time.perf_counter()
        for source, target in list(combinations(seeds, 2))[:MAX_PATHS]:
            await shortest_path(session, source_id=source, target_id=target, max_hops=PATH_HOPS)
        times["  paths"].append((time.perf_counter() - started) * 1000)


async def measure(dsn: str, home: Path, texts: list[str], hops: int) -> list[str]:
    """Assembly p50/p95 off and on, interleaved, and the graph source's own times."""
    db = Database(dsn)
    settings = Settings(home=home, provider="scripted", embedded=False, database_url=dsn)
    registry = ModelRegistry.from_settings(settings)
    async with db.session() as session:
        agent = await get_agent(session, handle=AGENT)
    assert agent is not None
    base: list[ContextSource] = [
        PersonaSource(),
        ConstraintsSource(),
        ClockSource(),
        DialogSource(db),
    ]
    graph = GraphSource(db, GraphSettings(context_hops=hops))
    off = ContextAssembler(db, registry, base)
    on = ContextAssembler(db, registry, [*base, graph])
    times: dict[str, list[float]] = {
        "off": [],
        "on": [],
        "graph source": [],
        "  mentions": [],
        "  neighbourhood": [],
        "  paths": [],
    }
    lines_shown: list[int] = []
    for text in texts[:20]:  # warm the pool and the caches
        await on.assemble(_data(text))
    for text in texts:
        for label, assembler in (("off", off), ("on", on)):
            started = time.perf_counter()
            await assembler.assemble(_data(text))
            times[label].append((time.perf_counter() - started) * 1000)
        data = _data(text)
        request = ContextRequest(
            input=data, agent=agent, binding=registry.binding(data.task), budget_tokens=6000
        )
        started = time.perf_counter()
        block = await graph.fetch(request)
        times["graph source"].append((time.perf_counter() - started) * 1000)
        lines_shown.append(len(block.items) if block else 0)
        await _parts(db, text, hops, times)
    await db.aclose()
    p50 = {k: percentile(v, 0.5) for k, v in times.items()}
    table = [
        "| configuration | inputs | p50 ms | p95 ms | max ms |",
        "|---|---|---|---|---|",
        *(
            f"| {label} | {len(v)} | {percentile(v, 0.5):.2f} | {percentile(v, 0.95):.2f} "
            f"| {max(v):.2f} |"
            for label, v in times.items()
        ),
        "",
        f"p50 added by the graph: {p50['on'] - p50['off']:+.2f} ms (target <= 10 ms together "
        f"with observations). Graph lines per prompt: mean "
        f"{sum(lines_shown) / len(lines_shown):.1f}, max {max(lines_shown)}; "
        f"{sum(1 for n in lines_shown if n)} of {len(lines_shown)} inputs got a block.",
    ]
    return table


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--edges", type=int, default=50_000)
    parser.add_argument("--inputs", type=int, default=300)
    parser.add_argument("--hops", type=int, default=GraphSettings().context_hops)
    parser.add_argument("--no-record", action="store_true", help="Print, do not append.")
    args = parser.parse_args()
    rng = random.Random(15)
    load_before = os.getloadavg()[0]
    with tempfile.TemporaryDirectory(prefix="persyn-bench-graph-") as tmp:
        home = Path(tmp)
        home.chmod(0o755)
        pg = EmbeddedPostgres(home / "pg", free_port(), home / "logs" / "pg.log")
        pg.start()
        try:
            upgrade(pg.dsn)
            asyncio.run(_create_agent(pg.dsn))
            names, loaded = load(pg.dsn, args.edges, rng)
            lines = asyncio.run(measure(pg.dsn, home, inputs(names, args.inputs, rng), args.hops))
        finally:
            pg.stop()
    body = "\n".join(
        [
            f"`python -m bench.graph_context --edges {args.edges} --inputs {args.inputs} "
            f"--hops {args.hops}`: one "
            f"agent, {NODES:,} entities, {args.edges:,} relations (1% hub entities drawn 40x as "
            "often; 10% invalidated), loaded with COPY in "
            f"{loaded:.1f} s. Each input mentions 0-3 known entities. Context assembly with the "
            "built-in sources (persona, constraints, clock, dialog), off and on interleaved; "
            f"graph: {args.hops} hop(s), 30 relations, 6 mentions, paths of up to {PATH_HOPS} "
            f"hops between up to {MAX_PATHS} pairs. "
            f"Load average (1 min): {load_before:.1f} before, {os.getloadavg()[0]:.1f} after.",
            "",
            *lines,
        ]
    )
    if args.no_record:
        print(body)
    else:
        record("Knowledge graph on the reply's path", body)


if __name__ == "__main__":
    main()
