"""Recall at scale: filtered top-k over 100,000 memories of one agent, against exact search.

One agent holds ``--records`` memories (384-d vectors drawn around 300 topics in 30 themes, so
neighbourhoods are graded as with text embeddings) across channels, memory groups, sensitivities
and people, loaded with COPY. Each query runs the production candidate query
(``store.queries.recall.semantic_candidates``: the fences, HNSW with iterative scan) for a
random channel and set of people present; the exact answer is the same query with index scans
disabled, which forces a scan of every row that passes the fences. Reported per ``ef_search``:
latency p50/p95 (the whole call, SET LOCALs and round trip included) and recall@k.

Usage: ``python -m bench.retrieval_scale [--records 100000] [--queries 300] [--k 10]``
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np
from sqlalchemy import text

from bench.harness import percentile, record
from bench.retrieval_data import (
    CHANNELS,
    MODEL,
    PEOPLE,
    THEMES,
    TOPICS,
    Corpus,
    fences,
    load,
    rebuild_index,
    serve_with,
)
from schemas.memory import MemorySettings
from store.db import Database
from store.embedded import EmbeddedPostgres
from store.migrate import upgrade
from store.queries.recall import (
    FENCE_SQL,
    Fence,
    lexical_candidates,
    semantic_candidates,
)
from store.sql import vector_literal
from temporal.devserver import free_port


async def run_queries(
    db: Database,
    queries: list[tuple[Fence, list[float]]],
    *,
    limit: int,
    ef: int,
    exact: bool = False,
) -> tuple[list[float], list[list[str]]]:
    """Latency (ms) and answer (IDs, nearest first) of each query."""
    times, answers = [], []
    for fence, vector in queries:
        started = time.perf_counter()
        async with db.session() as session:
            if exact:
                conn = await session.connection()
                await conn.exec_driver_sql("SET LOCAL enable_indexscan = off")
            rows = await semantic_candidates(
                session, fence, vector=vector, model=MODEL, limit=limit, ef_search=ef
            )
        times.append((time.perf_counter() - started) * 1000)
        answers.append([row.id for row in rows])
    return times, answers


async def lexical_times(db: Database, queries: list[tuple[Fence, list[float]]]) -> list[float]:
    """The encoder-down path, worst case: every summary shares a word with the input."""
    times = []
    for fence, _ in queries:
        started = time.perf_counter()
        async with db.session() as session:
            await lexical_candidates(session, fence, lexemes=["topic", "memori"], limit=50)
        times.append((time.perf_counter() - started) * 1000)
    return times


async def plan(db: Database, fence: Fence, vector: list[float], ef: int) -> str:
    """EXPLAIN of the production query's inner scan, to show the HNSW index is used."""
    async with db.session() as session:
        conn = await session.connection()
        await conn.exec_driver_sql("SET LOCAL hnsw.iterative_scan = relaxed_order")
        await conn.exec_driver_sql(f"SET LOCAL hnsw.ef_search = {ef}")
        rows = await conn.execute(
            text(
                "EXPLAIN SELECT m.id FROM memory_records m WHERE "
                f"{FENCE_SQL} AND m.embed_model = :model AND m.embedding IS NOT NULL "
                "ORDER BY m.embedding <=> CAST(:v AS vector) LIMIT 10"
            ),
            {**fence.params(), "model": MODEL, "v": vector_literal(vector)},
        )
        lines = (str(row[0]) for row in rows)
        return "\n".join(re.sub(r"'\[[^']*\]'", "'[...]'", line) for line in lines)


def row(
    label: str, times: list[float], got: list[list[str]], truth: list[list[str]], k: int
) -> str:
    recalls = [
        len(set(g[:k]) & set(t)) / max(1, min(k, len(t))) for g, t in zip(got, truth, strict=True)
    ]
    return (
        f"| {label} | {percentile(times, 0.5):.1f} | {percentile(times, 0.95):.1f} | "
        f"{statistics.fmean(recalls):.3f} | {min(recalls):.2f} |"
    )


async def measure(dsn: str, args: argparse.Namespace, corpus: Corpus) -> list[str]:
    db = Database(dsn, pool_size=2)
    k = args.k
    settings = MemorySettings()
    # As recall runs it: at least recall_candidates rows, ef_search at least that many.
    fetch = settings.recall_candidates
    fetch_ef = max(settings.recall_ef_search, fetch)
    try:
        queries = fences(corpus, args.queries, seed=7)
        warm = fences(corpus, 30, seed=99)
        await run_queries(db, warm, limit=k, ef=100, exact=True)
        exact_times, truth = await run_queries(db, queries, limit=k, ef=100, exact=True)

        async def approximate(label: str, limit: int, ef: int) -> str:
            await run_queries(db, warm, limit=limit, ef=ef)
            times, got = await run_queries(db, queries, limit=limit, ef=ef)
            return row(label, times, got, truth, k)

        lines = [
            f"| query | p50 ms | p95 ms | mean recall@{k} | worst recall@{k} |",
            "|---|---|---|---|---|",
            row("exact (index scans off)", exact_times, truth, truth, k),
        ]
        for ef in args.ef:
            lines.append(await approximate(f"top {k}, ef_search {ef}", k, ef))
        lines.append(
            await approximate(f"recall's call: top {fetch}, ef_search {fetch_ef}", fetch, fetch_ef)
        )
        lexical = await lexical_times(db, queries[:50])
        lines.append(
            f"| words only (encoder down), every record matching | "
            f"{percentile(lexical, 0.5):.1f} | {percentile(lexical, 0.95):.1f} | - | - |"
        )
        fence, vector = queries[0]
        tail = ["", "Plan of the inner scan (first query):", "```"]
        tail += [await plan(db, fence, vector, settings.recall_ef_search), "```"]
        if args.baseline_ef_construction:
            built = rebuild_index(dsn, args.baseline_ef_construction)
            label = f"0001's index (ef_construction {args.baseline_ef_construction}, built in "
            label += f"{built:.0f} s): "
            ef = settings.recall_ef_search
            lines.append(await approximate(f"{label}top {k}, ef_search {ef}", k, ef))
            lines.append(await approximate(f"{label}recall's call", fetch, fetch_ef))
        return lines + tail
    finally:
        await db.aclose()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=100_000)
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--k", type=int, default=10)
    parser.add_argument("--ef", type=int, nargs="+", default=[40, 100, 200])
    parser.add_argument(
        "--baseline-ef-construction",
        type=int,
        default=64,
        help="Also measure an index built so (0 skips it); 64 is what migration 0001 built.",
    )
    parser.add_argument("--shared-buffers", default="1GB", help="'' keeps the embedded 128MB.")
    parser.add_argument("--no-record", action="store_true", help="Print, do not append.")
    args = parser.parse_args()
    load_before = os.getloadavg()[0]
    with tempfile.TemporaryDirectory(prefix="persyn-bench-recall-") as tmp:
        home = Path(tmp)
        home.chmod(0o755)
        pg = EmbeddedPostgres(home / "pg", free_port(), home / "logs" / "pg.log")
        pg.start()
        try:
            upgrade(pg.dsn)
            corpus, loaded, indexed, built_with = load(
                pg.dsn, args.records, np.random.default_rng(1)
            )
            if args.shared_buffers:
                serve_with(pg, args.shared_buffers)
            lines = asyncio.run(measure(pg.dsn, args, corpus))
        finally:
            pg.stop()
    body = "\n".join(
        [
            f"{args.records:,} memories of one agent, 384-d vectors around {TOPICS} topics "
            f"in {THEMES} themes, "
            f"{len(CHANNELS)} channels in 2 memory groups and 3 lone channels, 4 sensitivities, "
            f"{PEOPLE} people. {args.queries} queries, each for a random channel (its group's "
            "channels searched) and 1-2 people present; exact = the same query with index "
            "scans off. Latency is the whole call through `semantic_candidates`.",
            "",
            f"Load with COPY: {loaded:.1f} s; HNSW build ({built_with}): "
            f"{indexed:.1f} s. shared_buffers: {args.shared_buffers or '128MB (embedded)'}, "
            "table and index prewarmed. Load average (1 min): "
            f"{load_before:.1f} before, {os.getloadavg()[0]:.1f} after.",
            "",
            *lines,
        ]
    )
    if args.no_record:
        print(body)
    else:
        record("Recall at scale: filtered top-k through the production query", body)


if __name__ == "__main__":
    main()
