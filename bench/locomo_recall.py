"""LoCoMo retrieval: recall of evidence turns by Persyn's own import and dialog search.

    python bench/locomo_recall.py PATH/TO/locomo-dev.json [--encoder local|none] [--no-record]

Starts a private embedded PostgreSQL in a temporary directory, migrates it, imports the file
with ``store.importer`` (one agent; each LoCoMo conversation is its own channel, and each
question searches only its conversation's channel), then asks every question with evidence
through ``DialogSearch`` and reports R@5/10/20 and S@1/3/5 per category (1-4 micro-averaged as
"overall", 5 apart), query latency, and the README's BM25 method as a per-category reference.
Variants (``--variant name:key=value,...``) rerun the questions with other ranking weights on
the same import. Results are appended to bench/RESULTS.md unless ``--no-record``.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import statistics
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

# Runnable as a script from anywhere: the project root is what the imports are relative to.
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from activities.memory.encoders.local import LocalEncoder
from activities.memory.search import DialogSearch, FusionParams
from bench.harness import machine, private_postgres
from bench.locomo_data import CATEGORIES, Question, Scores, bm25_reference, load
from schemas.agents import AgentCreate
from store.db import Database
from store.embedded import EmbeddedPostgres
from store.importer import import_file
from store.queries.agents import create_agent
from store.queries.search import Bm25Params, channel_by_key

AGENT = "locomo-bench"
METRICS = ("R@5", "R@10", "R@20", "S@1", "S@3", "S@5")
DEPTH = 50
"""Hits asked for per question: enough for R@20 and for five distinct sessions."""


@dataclasses.dataclass
class Variant:
    name: str
    bm25: Bm25Params
    fusion: FusionParams
    semantic: bool = True
    changes: str = "-"


def parse_variant(spec: str) -> Variant:
    """``name:k1=0.9,b=0.75,lexical_weight=1`` (fields of Bm25Params or FusionParams)."""
    name, _, body = spec.partition(":")
    bm25, fusion, semantic = {}, {}, True
    for item in filter(None, body.split(",")):
        key, _, value = item.partition("=")
        if key == "semantic":
            semantic = value not in ("0", "false", "no")
        elif key in {f.name for f in dataclasses.fields(Bm25Params)}:
            bm25[key] = type(getattr(Bm25Params(), key))(value)
        elif key in {f.name for f in dataclasses.fields(FusionParams)}:
            fusion[key] = type(getattr(FusionParams(), key))(value)
        else:
            raise SystemExit(f"error: unknown variant setting {key!r}")
    return Variant(name, Bm25Params(**bm25), FusionParams(**fusion), semantic, body or "-")


async def evaluate(
    db: Database, encoder: LocalEncoder | None, variant: Variant, questions: list[Question]
) -> tuple[Scores, list[float]]:
    search = DialogSearch(
        db, encoder if variant.semantic else None, bm25=variant.bm25, fusion=variant.fusion
    )
    channels: dict[str, str] = {}
    async with db.session() as session:
        for sample in {q.sample for q in questions}:
            channels[sample] = await channel_by_key(session, agent=AGENT, key=f"locomo:{sample}")
    scores, latencies = Scores(), []
    for q in questions:
        started = time.perf_counter()
        hits = await search.search(AGENT, q.text, channel_ids=[channels[q.sample]], limit=DEPTH)
        latencies.append((time.perf_counter() - started) * 1000)
        scores.add(q, [h.source_ref or "" for h in hits])
    return scores, latencies


def table(title: str, scores: Scores, latencies: list[float] | None) -> str:
    lines = [f"**{title}**", "", "| category | n | " + " | ".join(METRICS) + " |"]
    lines.append("|---|---:|" + "---:|" * len(METRICS))
    rows: list[tuple[str, tuple[int, ...]]] = [(f"{c} {CATEGORIES[c]}", (c,)) for c in (1, 2, 3, 4)]
    rows += [("**overall 1-4**", (1, 2, 3, 4)), ("5 adversarial (apart)", (5,))]
    for label, cats in rows:
        values = " | ".join(f"{scores.mean(cats, m):.3f}" for m in METRICS)
        lines.append(f"| {label} | {scores.count(cats)} | {values} |")
    if latencies:
        p50, p95 = percentiles(latencies)
        lines += [
            "",
            f"query latency (top {DEPTH}, encoding included): p50 {p50:.1f} ms, p95 {p95:.1f} ms",
        ]
    return "\n".join(lines)


def percentiles(latencies: list[float]) -> tuple[float, float]:
    ordered = sorted(latencies)
    return statistics.median(ordered), ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))]


VARIANT_HEADER = [
    "| variant | changes | R@5 | R@10 | R@20 | S@1 | S@3 | S@5 | R@10 cat 1 / 2 / 3 / 4 | p50 ms |",
    "|---|---|---:|---:|---:|---:|---:|---:|---|---:|",
]


def variant_row(name: str, changes: str, scores: Scores, latencies: list[float] | None) -> str:
    overall = " | ".join(f"{scores.mean((1, 2, 3, 4), m):.3f}" for m in METRICS)
    per_category = " / ".join(f"{scores.mean((c,), 'R@10'):.3f}" for c in (1, 2, 3, 4))
    p50 = f"{percentiles(latencies)[0]:.0f}" if latencies else "-"
    return f"| {name} | {changes} | {overall} | {per_category} | {p50} |"


async def run(args: argparse.Namespace, server: EmbeddedPostgres) -> str:
    turns, questions = load(args.path)
    variants = [Variant("default", Bm25Params(), FusionParams())]
    variants += [parse_variant(v) for v in args.variant]
    db = Database(server.dsn)
    encoder = LocalEncoder() if args.encoder == "local" else None
    try:
        async with db.session() as session:
            await create_agent(
                session, spec=AgentCreate(handle=AGENT, name="LoCoMo", persona="Benchmark.")
            )
        started = time.perf_counter()
        report = await import_file(db, agent=AGENT, path=args.path, encoder=encoder)
        took = time.perf_counter() - started
        out = [
            f"### LoCoMo retrieval, {datetime.now(UTC):%Y-%m-%d} ({machine()})",
            "",
            f"{args.path.name}: {report.turns} turns in {report.conversations} sessions, "
            f"{len(questions)} questions with evidence; imported in {took:.1f} s "
            f"({report.turns_embedded} turns embedded, encoder {args.encoder}).",
        ]
        rows = []
        for variant in variants:
            scores, latencies = await evaluate(db, encoder, variant, questions)
            rows.append(variant_row(variant.name, variant.changes, scores, latencies))
            if variant.name == "default":
                settings = {
                    **dataclasses.asdict(variant.bm25),
                    **dataclasses.asdict(variant.fusion),
                }
                out += ["", table("Persyn DialogSearch (defaults)", scores, latencies)]
                out += ["", f"defaults: {settings}"]
        reference = bm25_reference(turns, questions)
        title = "Reference: the README's BM25 (k1 1.5, b .75), computed here"
        out += ["", table(title, reference, None)]
        rows.append(variant_row("reference BM25 (README method)", "-", reference, None))
        out += ["", "**Variants on the same import** (changes against the defaults)", ""]
        out += [*VARIANT_HEADER, *rows]
    finally:
        await db.aclose()
        if encoder is not None:
            await encoder.aclose()
    return "\n".join(out)


def main(args: argparse.Namespace) -> str:
    """A private PostgreSQL for the run, gone afterwards."""
    with private_postgres("persyn-locomo-") as server:
        return asyncio.run(run(args, server))


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("path", type=Path, help="locomo-dev.json (not part of the project)")
    parser.add_argument("--encoder", choices=("local", "none"), default="local")
    parser.add_argument("--variant", action="append", default=[], help="name:key=value,...")
    parser.add_argument("--no-record", action="store_true", help="do not append to RESULTS.md")
    arguments = parser.parse_args()
    if not arguments.path.is_file():
        raise SystemExit(f"error: {arguments.path} is not a file")
    text = main(arguments)
    print(text)
    if not arguments.no_record:
        results = Path(__file__).resolve().parent / "RESULTS.md"
        with results.open("a", encoding="utf-8") as handle:
            handle.write("\n" + text + "\n")
