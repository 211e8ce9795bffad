"""Two-agent runaway guard: tokens spent until 20 pairs that would agree forever stop.

Each pair talks through real workers, Temporal and PostgreSQL with a scripted model that
always answers, always agrees, and always adds something (so the right to silence never
fires): without a bound they would talk forever. The channel's token budget is the bound.
Each pair's replies have their own length (about 10 to 70 tokens), so the budget is reached
after a different number of messages. The budget counts every model token an agent's runs on
the channel cost (from the usage ledger) and is asked before each reply is generated. Reported
per pair: messages delivered, the model tokens each side spent on its channel (the figure the
budget bounds, to within the one exchange afforded before it ran out), the model tokens the
exchange cost in all, why it stopped and when.

Usage: ``python -m bench.runaway [--pairs 20] [--budget 20000] [--no-record]``
"""

from __future__ import annotations

import argparse
import asyncio
import json
import time
from dataclasses import dataclass

from sqlmodel import col, func, select

from bench.harness import BenchStack, bench_stack, new_agent, percentile, record, worker_process
from schemas.peers import agent_channel
from store.db import Database
from store.tables import UsageRow
from usecases.peers import StopReason, follow_conversation, start_conversation

# fmt: off
WORDS = [
    "river", "orchard", "lantern", "harbour", "meadow", "granite", "willow", "compass", "ember",
    "thistle", "falcon", "quarry", "saffron", "beacon", "glacier", "hollow", "juniper", "marble",
    "nettle", "pebble", "quiver", "rowan",
]
# fmt: on


def _clause(pair: int, side: int) -> str:
    """Something new for ``side`` of ``pair`` to add, its length growing with the pair.

    The two sides never share a word, so neither reply merely restates the other.
    """
    count = 3 + pair * 2
    picked = [f"{WORDS[(pair + k) % len(WORDS)]}{side}{k // len(WORDS)}" for k in range(count)]
    return "we should also consider the " + ", the ".join(picked)


def script(pairs: int) -> dict[str, object]:
    """Rules for every pair: ping answers pong and pong answers ping, agreeing and adding."""
    rules = []
    for pair in range(pairs):
        rules.append(
            {
                "task": "respond",
                "match": rf"\bping{pair}\b",
                "reply": f"I agree completely, and {_clause(pair, 1)}. pong{pair}",
            }
        )
        rules.append(
            {
                "task": "respond",
                "match": rf"\bpong{pair}\b",
                "reply": f"Exactly right, and {_clause(pair, 0)}. ping{pair}",
            }
        )
    return {"rules": rules}


@dataclass
class Outcome:
    """How one pair ended."""

    pair: int
    messages: int
    budget_tokens: tuple[int, int]
    """Model tokens each side spent on its channel to the other."""
    last_exchange: tuple[int, int]
    """Each side's costliest activation: what one exchange past the budget may add."""
    model_tokens: int
    stopped: StopReason | None
    seconds: float


async def _pair(stack: BenchStack, db: Database, queue: str, pair: int) -> Outcome:
    first = await new_agent(db, "ra")
    second = await new_agent(db, "rb")
    settings = stack.settings()
    began = time.monotonic()
    opening = await start_conversation(
        settings=settings,
        client=stack.client,
        first=first,
        second=second,
        opening=f"Let us plan the trip together. ping{pair}",
        task_queue=queue,
    )
    events = [
        e async for e in follow_conversation(settings=settings, opening_id=opening, timeout=900)
    ]
    seconds = time.monotonic() - began
    spent, largest = [], []
    async with db.session() as session:
        for sender, recipient in ((first, second), (second, first)):
            rows = await session.exec(
                select(UsageRow.activation, UsageRow.input_tokens + UsageRow.output_tokens).where(
                    UsageRow.agent == sender, UsageRow.channel == agent_channel(recipient).key
                )
            )
            per_activation: dict[str | None, int] = {}
            for activation, tokens in rows:
                per_activation[activation] = per_activation.get(activation, 0) + int(tokens)
            spent.append(sum(per_activation.values()))
            largest.append(max(per_activation.values(), default=0))
        usage = await session.exec(
            select(
                func.coalesce(func.sum(UsageRow.input_tokens + UsageRow.output_tokens), 0)
            ).where(col(UsageRow.agent).in_([first, second]))
        )
        model_tokens = int(usage.one())
    return Outcome(
        pair=pair,
        messages=sum(1 for e in events if e.stopped is None),
        budget_tokens=(spent[0], spent[1]),
        last_exchange=(largest[0], largest[1]),
        model_tokens=model_tokens,
        stopped=events[-1].stopped if events else None,
        seconds=seconds,
    )


async def measure(pairs: int, budget: int, concurrency: int) -> list[Outcome]:
    """Run every pair (``concurrency`` at a time) on one worker process."""
    async with bench_stack() as stack:
        path = stack.home / "script.json"
        path.write_text(json.dumps(script(pairs)))
        env = {
            "PERSYN_SCRIPTED_SCRIPT": str(path),
            "PERSYN_PACING__BUDGET_TOKENS": str(budget),
            "PERSYN_PACING__MIN_INTERVAL_SECONDS": "0.2",
            "PERSYN_PACING__LISTEN_SECONDS": "0.1",
            "PERSYN_PACING__JITTER_SECONDS": "0.2",
        }
        queue = "runaway"
        db = Database(stack.dsn, pool_size=4)
        try:
            async with worker_process(stack, queue, env):
                gate = asyncio.Semaphore(concurrency)

                async def one(pair: int) -> Outcome:
                    async with gate:
                        return await _pair(stack, db, queue, pair)

                return list(await asyncio.gather(*(one(p) for p in range(pairs))))
        finally:
            await db.aclose()


def report(outcomes: list[Outcome], budget: int) -> str:
    """The results table and the verdict."""
    lines = [
        f"{len(outcomes)} scripted pairs that agree and add something in every reply, "
        f"model-token budget {budget} per agent and channel (rolling window one hour), "
        "scripted model, one worker process, embedded PostgreSQL and Temporal dev server.",
        "",
        "| pair | messages | spent A->B | B->A | model tokens (all) | stopped by | s |",
        "|---|---|---|---|---|---|---|",
    ]
    for o in outcomes:
        stopped = o.stopped.value if o.stopped else "?"
        lines.append(
            f"| {o.pair} | {o.messages} | {o.budget_tokens[0]} | {o.budget_tokens[1]} | "
            f"{o.model_tokens} | {stopped} | {o.seconds:.1f} |"
        )
    bounded = all(
        o.stopped is StopReason.BLOCKED
        and all(
            spent - last < budget
            for spent, last in zip(o.budget_tokens, o.last_exchange, strict=True)
        )
        for o in outcomes
    )
    model = [float(o.model_tokens) for o in outcomes]
    lines += [
        "",
        "Bounded by the budget (each side within it but for the one exchange afforded before "
        f"it ran out): {'every pair' if bounded else 'NOT every pair'}; messages per "
        f"pair {min(o.messages for o in outcomes)}-{max(o.messages for o in outcomes)}; model "
        f"tokens per pair p50 {percentile(model, 0.5):.0f}, max {max(model):.0f}.",
    ]
    return "\n".join(lines)


def main() -> None:
    """Run the benchmark and record it."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--pairs", type=int, default=20)
    parser.add_argument("--budget", type=int, default=20000)
    parser.add_argument("--concurrency", type=int, default=5)
    parser.add_argument("--no-record", action="store_true")
    args = parser.parse_args()
    outcomes = asyncio.run(measure(args.pairs, args.budget, args.concurrency))
    body = report(outcomes, args.budget)
    if args.no_record:
        print(body)
    else:
        record("Two-agent runaway guard", body)


if __name__ == "__main__":
    main()
