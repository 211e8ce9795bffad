"""LoCoMo through memories: recall of evidence by memories, before and after folding.

    python bench/locomo_memories.py PATH/TO/locomo-dev.json [--threshold 6 ...] [--no-record]

Starts a private embedded PostgreSQL, imports the file with ``store.importer`` (one agent; each
LoCoMo conversation a channel, each session a conversation), then forms memories as the default
stack does without a model key: every session, in runs of ``chunk_turns`` turns, becomes one
plain first-person record (``activities.memory.formation.plain``), embedded by the local
encoder. Every question with evidence is then asked through ``MemoryRecall`` on its
conversation's channel, before folding and after it (the real ``FoldingActivities``, on a plan
where the ``fold`` task does not run, so recollections are written without a model; each
``--threshold`` folds a fresh copy of the records).

A line reaches the evidence turns it was formed from: a memory its range of turns, a
recollection every turn beneath it through its ``derived_from`` links. Reported per category:
R@k (the share of a question's evidence reached by the first k lines), the dialog turns those
k lines reach (what a hit costs), and the tokens of the memory block as the prompt holds it at
the default budget (every line recall returns) and at ten lines. Folding's cost is counted on
the requests a model plan would make: one ``fold`` call per recollection, its prompt's tokens
estimated as the gateway does.
"""

from __future__ import annotations

import argparse
import asyncio
import secrets
import statistics
import sys
import time
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, cast

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from activities.gateway.gateway import ModelGateway
from activities.memory.encoders.local import LocalEncoder
from activities.memory.folding import FoldingActivities, fold_request
from activities.memory.formation.plain import plain_rating, plain_summary
from activities.memory.recall import MemoryBlock, MemoryRecall
from bench.harness import machine, private_postgres
from bench.locomo_data import CATEGORIES, Question, load
from schemas.agents import AgentCreate
from schemas.folding import FoldInput, FoldPlanInput
from schemas.ids import new_ulid, ulid_from_parts
from schemas.memory import MemorySettings
from schemas.models import TaskType
from schemas.recall import RetrievedMemory
from schemas.text import estimate_tokens
from store.db import Database
from store.embedded import EmbeddedPostgres
from store.importer import import_file
from store.queries.agents import create_agent
from store.queries.folding import batch_sources, previous_recollection
from store.queries.memory import NewRecord, insert_record
from store.queries.memory_formation import RangeTurn
from store.sql import execute

AGENT = "locomo-memories"
AT = (1, 3, 5, 10)
SUMMARY_CHARS = 500
"""The tiny model's plan caps a plain record at this many characters (its summary stage)."""
WINDOW = 200_000
"""A hosted model's window: the memory budget holds every line recall returns."""


class NoFoldModel:
    """The default stack's plan as folding sees it: the ``fold`` task does not run."""

    def runs(self, task: TaskType) -> bool:
        return task is not TaskType.FOLD


@dataclass
class Condition:
    """Per-category values of one way of recalling."""

    name: str
    recall: dict[int, dict[int, list[float]]] = field(
        default_factory=lambda: defaultdict(lambda: defaultdict(list))
    )
    reached: dict[int, list[int]] = field(default_factory=lambda: defaultdict(list))
    block_tokens: list[int] = field(default_factory=list)
    ten_tokens: list[int] = field(default_factory=list)
    lines: list[int] = field(default_factory=list)

    def mean(self, values: Sequence[float]) -> float:
        return sum(values) / len(values) if values else float("nan")


async def form_memories(db: Database, encoder: LocalEncoder, settings: MemorySettings) -> int:
    """One plain level-1 record per ``chunk_turns`` run of each imported session."""
    async with db.autocommit() as session:
        rows = (
            await execute(
                session,
                "SELECT d.id, d.conversation_id, d.role, d.speaker_name, d.person_id, d.text, "
                "d.at, c.id AS channel_id, c.key FROM dialog_turns d "
                "JOIN conversations v ON v.id = d.conversation_id "
                "JOIN channels c ON c.id = v.channel_id WHERE d.agent = :a "
                "ORDER BY d.conversation_id, d.seq",
                {"a": AGENT},
            )
        ).all()
    by_conversation: dict[str, list[Any]] = defaultdict(list)
    for row in rows:
        by_conversation[str(row.conversation_id)].append(row)
    records: list[NewRecord] = []
    size = settings.chunk_turns or 24
    for conversation, turns in by_conversation.items():
        for start in range(0, len(turns), size):
            chunk = turns[start : start + size]
            said = [
                RangeTurn(
                    id=str(t.id),
                    role=str(t.role),
                    speaker_name=str(t.speaker_name),
                    person_id=t.person_id,
                    text=str(t.text),
                    at=t.at,
                    imported=True,
                )
                for t in chunk
            ]
            importance, rubric = plain_rating(said)
            records.append(
                NewRecord(
                    id=ulid_from_parts(chunk[-1].at, secrets.randbits(80)),
                    agent=AGENT,
                    channel_id=str(chunk[0].channel_id),
                    conversation_id=conversation,
                    summary=plain_summary(said, channel=str(chunk[0].key), max_chars=SUMMARY_CHARS),
                    importance=importance,
                    created_at=chunk[-1].at,
                    sensitivity="public",
                    turn_first=said[0].id,
                    turn_last=said[-1].id,
                    turn_first_at=chunk[0].at,
                    turn_last_at=chunk[-1].at,
                    rubric=rubric,
                )
            )
    vectors = await encoder.encode([r.summary for r in records])
    async with db.session() as session:
        for record, vector in zip(records, vectors, strict=True):
            await insert_record(
                session,
                record=NewRecord(
                    **{**record.__dict__, "embedding": vector, "embed_model": encoder.name}
                ),
            )
        await session.commit()
    return len(records)


async def reached_turns(db: Database) -> dict[str, set[str]]:
    """Each record's evidence ids: its turns' LoCoMo ids, or its records' beneath it."""
    async with db.autocommit() as session:
        rows = (
            await execute(
                session,
                "SELECT m.id, array_agg(d.source_ref) AS refs FROM memory_records m "
                "JOIN dialog_turns f ON f.id = m.turn_first "
                "JOIN dialog_turns l ON l.id = m.turn_last "
                "JOIN dialog_turns d ON d.conversation_id = m.conversation_id "
                "AND d.seq BETWEEN f.seq AND l.seq "
                "WHERE m.agent = :a AND m.level = 1 GROUP BY m.id",
                {"a": AGENT},
            )
        ).all()
        links = (
            await execute(
                session,
                "SELECT id, derived_from FROM memory_records WHERE agent = :a AND level > 1 "
                "ORDER BY level",
                {"a": AGENT},
            )
        ).all()
    reached = {str(r.id): {str(ref) for ref in r.refs if ref} for r in rows}
    for link in links:  # lower levels first, so a level-3 finds its level-2s filled
        reached[str(link.id)] = set().union(
            *(reached.get(str(c), set()) for c in link.derived_from)
        )
    return reached


async def ask(
    db: Database,
    encoder: LocalEncoder,
    questions: Sequence[Question],
    condition: Condition,
    settings: MemorySettings,
) -> None:
    reached = await reached_turns(db)
    recall = MemoryRecall(db, encoder, settings)
    now = datetime(2030, 1, 1, tzinfo=UTC)
    for q in questions:
        found = await recall.recall(
            agent=AGENT,
            channel_key=f"locomo:{q.sample}",
            present=[],
            query=q.text,
            now=now,
            context_window=WINDOW,
        )
        lines: list[RetrievedMemory] = found.records if found is not None else []
        evidence = set(q.evidence)
        for k in AT:
            got = set().union(*(reached.get(m.id, set()) for m in lines[:k]))
            condition.recall[q.category][k].append(len(evidence & got) / len(evidence))
        condition.reached[q.category].append(
            len(set().union(*(reached.get(m.id, set()) for m in lines[:10])))
        )
        if found is not None:
            whole = MemoryBlock(surfaced=found, share=1.0, timezone="UTC")
            ten = MemoryBlock(
                surfaced=found.model_copy(update={"records": lines[:10]}), share=1.0, timezone="UTC"
            )
            condition.block_tokens.append(whole.tokens())
            condition.ten_tokens.append(ten.tokens())
        condition.lines.append(len(lines))


async def fold(db: Database, encoder: LocalEncoder, settings: MemorySettings) -> dict[str, float]:
    """Fold everything ready; the calls and prompt tokens a model plan would spend."""
    steps = FoldingActivities(db, cast(ModelGateway, NoFoldModel()), encoder, settings)
    calls, prompt_tokens = 0, 0
    levels: dict[int, int] = defaultdict(int)
    started = time.perf_counter()
    while True:
        plan = await steps.fold_plan(FoldPlanInput(agent=AGENT, limit=200))
        if not plan.batches:
            break
        for batch in plan.batches:
            async with db.autocommit() as session:
                sources = await batch_sources(session, batch)
                previous = await previous_recollection(
                    session,
                    first=sources[0].record,
                    level=batch.level + 1,
                    before=sources[0].first_at,
                )
            request = fold_request(
                sources, previous, agent_name="LoCoMo", max_chars=settings.fold_chars
            )
            prompt_tokens += estimate_tokens(request.system) + sum(
                estimate_tokens(m.content) for m in request.messages
            )
            done = await steps.fold(FoldInput(recollection_id=new_ulid(), batch=batch))
            if done.recollection_id is not None:
                calls += 1
                levels[batch.level + 1] += 1
    return {
        "calls": calls,
        "prompt_tokens": prompt_tokens,
        "seconds": time.perf_counter() - started,
        **{f"level {level}": count for level, count in sorted(levels.items())},
    }


async def reset_folds(db: Database) -> None:
    """Back to level 1 only, for the next threshold."""
    async with db.session() as session:
        await execute(
            session, "UPDATE memory_records SET folded_into = NULL WHERE agent = :a", {"a": AGENT}
        )
        await execute(
            session, "DELETE FROM memory_records WHERE agent = :a AND level > 1", {"a": AGENT}
        )
        await session.commit()


def recall_table(conditions: Sequence[Condition]) -> list[str]:
    head = "| recall | category | n | " + " | ".join(f"R@{k}" for k in AT)
    head += " | turns reached by 10 lines |"
    out = [head, "|---|---|---:|" + "---:|" * (len(AT) + 1)]
    for condition in conditions:
        rows: list[tuple[str, tuple[int, ...]]] = [
            (f"{c} {CATEGORIES[c]}", (c,)) for c in (1, 2, 3, 4)
        ]
        rows.append(("**overall 1-4**", (1, 2, 3, 4)))
        for label, cats in rows:
            pool = {k: [v for c in cats for v in condition.recall[c][k]] for k in AT}
            turns = [v for c in cats for v in condition.reached[c]]
            values = " | ".join(f"{condition.mean(pool[k]):.3f}" for k in AT)
            out.append(
                f"| {condition.name} | {label} | {len(pool[AT[0]])} | {values} | "
                f"{condition.mean(turns):.1f} |"
            )
    return out


def tokens_table(conditions: Sequence[Condition]) -> list[str]:
    out = [
        "| recall | lines in the block (mean) | block tokens p50 / mean "
        "| 10 lines tokens p50 / mean | R@10 overall |",
        "|---|---:|---:|---:|---:|",
    ]
    for c in conditions:
        overall = [v for cat in (1, 2, 3, 4) for v in c.recall[cat][10]]
        out.append(
            f"| {c.name} | {c.mean(c.lines):.1f} | {statistics.median(c.block_tokens):.0f} / "
            f"{c.mean(c.block_tokens):.0f} | {statistics.median(c.ten_tokens):.0f} / "
            f"{c.mean(c.ten_tokens):.0f} | {c.mean(overall):.3f} |"
        )
    return out


async def run(args: argparse.Namespace, server: EmbeddedPostgres) -> str:
    _, questions = load(args.path)
    questions = [q for q in questions if q.category in (1, 2, 3, 4)]
    db = Database(server.dsn)
    encoder = LocalEncoder()
    try:
        async with db.session() as session:
            await create_agent(
                session, spec=AgentCreate(handle=AGENT, name="LoCoMo", persona="Benchmark.")
            )
        report = await import_file(db, agent=AGENT, path=args.path, encoder=None)
        base = MemorySettings()
        started = time.perf_counter()
        formed = await form_memories(db, encoder, base)
        out = [
            f"### LoCoMo through memories, {datetime.now(UTC):%Y-%m-%d} ({machine()})",
            "",
            f"{args.path.name}: {report.turns} turns in {report.conversations} sessions; "
            f"{formed} plain level-1 memories formed and embedded in "
            f"{time.perf_counter() - started:.1f} s; {len(questions)} questions (categories 1-4).",
        ]
        conditions = [Condition("level 1 only (before folding)")]
        await ask(db, encoder, questions, conditions[0], base)
        costs = []
        for threshold in args.threshold:
            settings = base.model_copy(update={"fold_threshold": threshold})
            await reset_folds(db)
            cost = await fold(db, encoder, settings)
            costs.append((threshold, cost))
            condition = Condition(f"folded, threshold {threshold}")
            await ask(db, encoder, questions, condition, settings)
            conditions.append(condition)
        out += ["", *recall_table(conditions), "", *tokens_table(conditions), ""]
        out += [
            "| threshold | recollections by level | fold calls per 100 level-1 | prompt tokens "
            "per call (est.) | per 100 level-1 | output cap per call |",
            "|---:|---|---:|---:|---:|---:|",
        ]
        for threshold, cost in costs:
            levels = ", ".join(f"{k}: {v}" for k, v in cost.items() if k.startswith("level"))
            per_call = cost["prompt_tokens"] / cost["calls"] if cost["calls"] else 0.0
            out.append(
                f"| {threshold} | {levels or '-'} | {100 * cost['calls'] / formed:.1f} | "
                f"{per_call:.0f} | {100 * cost['prompt_tokens'] / formed:.0f} | "
                f"{estimate_tokens('x' * base.fold_chars) + 10} |"
            )
    finally:
        await db.aclose()
        await encoder.aclose()
    return "\n".join(out)


def main(args: argparse.Namespace) -> str:
    """A private PostgreSQL for the run, gone afterwards."""
    with private_postgres("persyn-locomo-memories-") as server:
        return asyncio.run(run(args, server))


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("path", type=Path, help="locomo-dev.json (not part of the project)")
    parser.add_argument(
        "--threshold", type=int, action="append", help="fold thresholds (default: 6 and 3)"
    )
    parser.add_argument("--no-record", action="store_true", help="do not append to RESULTS.md")
    arguments = parser.parse_args()
    arguments.threshold = arguments.threshold or [6, 3]
    if not arguments.path.is_file():
        raise SystemExit(f"error: {arguments.path} is not a file")
    text = main(arguments)
    print(text)
    if not arguments.no_record:
        results = Path(__file__).resolve().parent / "RESULTS.md"
        with results.open("a", encoding="utf-8") as handle:
            handle.write("\n" + text + "\n")
