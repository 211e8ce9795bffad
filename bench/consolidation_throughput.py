"""Consolidation throughput: turns of stored dialog turned into memory records per second.

Runs on a private embedded stack with a zero-latency scripted model and an in-process worker,
so the figures are the platform's own cost (Temporal rounds, PostgreSQL, the encoder), not a
model's. Dialog is written straight to PostgreSQL, then one ``ConsolidationWorkflow`` per
conversation is started at once:

* independent: every conversation on its own agent and channel, all forming in parallel;
* one channel: every conversation on the same channel, where the as-of rule makes each wait
  for the memories of the ones before it (the serial worst case);

each with the encoder off and with the in-process local encoder (which also embeds the turns).

Usage: ``python -m bench.consolidation_throughput [--conversations 24] [--turns 20]``
"""

from __future__ import annotations

import argparse
import asyncio
import time
import uuid
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from activities.gateway.providers.scripted import Script, ScriptedProvider, ScriptRule
from bench.harness import BenchStack, bench_stack, percentile, record
from contract.names import consolidation_workflow_id
from schemas.agents import AgentCreate
from schemas.dialog import DialogTurn, Role
from schemas.events import ChannelRef
from schemas.ids import new_ulid
from schemas.memory_formation import (
    ConsolidationInput,
    ConsolidationResult,
    FormationReason,
    TurnRange,
)
from schemas.models import ProviderName
from store.db import Database
from store.queries.agents import create_agent
from store.queries.dialog import open_conversation, record_turn
from workers.build import build_dependencies, build_worker
from workflows.consolidation import ConsolidationWorkflow

RULES = [
    ScriptRule(
        task="summarize",
        system_match="forming an autobiographical memory",
        reply='{"summary": "I talked with Ada about the garden and promised to visit."}',
    ),
    ScriptRule(
        task="rate",
        system_match="rating how much",
        reply='{"emotional_significance": 4, "decision_making": 6, "novelty": 3, '
        '"continuation": 5, "explicit_importance": 1, "importance": 6, "reason": "a promise"}',
    ),
    ScriptRule(
        task="classify",
        system_match="classifying one of your own memories",
        reply='{"emotions": {"engaged": 0.7, "curious": 0.3}, "sensitivity": "private", '
        '"tags": ["garden", "visit"]}',
    ),
]

LINE = "We talked about the garden, the roses by the wall and when to prune the apple tree."


@dataclass
class Seeded:
    """A conversation written to the store, ready to consolidate."""

    agent: str
    channel: ChannelRef
    conversation_id: str
    last_turn: str
    turns: int


async def _seed(db: Database, *, count: int, turns: int, shared: bool) -> list[Seeded]:
    run = uuid.uuid4().hex[:6]
    seeded: list[Seeded] = []
    start = datetime.now(UTC) - timedelta(days=1)
    for n in range(count):
        handle = f"bench-{run}-{0 if shared else n}"
        channel = ChannelRef(service="bench", channel="shared" if shared else f"c{n}")
        if n == 0 or not shared:
            async with db.session() as session:
                await create_agent(
                    session, spec=AgentCreate(handle=handle, name="Bench", persona="A gardener.")
                )
        conversation = new_ulid()
        opened = start + timedelta(minutes=10 * n)
        async with db.session() as session:
            await open_conversation(
                session,
                conversation_id=conversation,
                agent=handle,
                channel=channel,
                opened_at=opened,
            )
        last = ""
        for t in range(turns):
            role = Role.PERSON if t % 2 == 0 else Role.AGENT
            turn = DialogTurn(
                turn_id=new_ulid(),
                conversation_id=conversation,
                role=role,
                speaker_id=new_ulid() if role is Role.PERSON else handle,
                speaker_name="Ada" if role is Role.PERSON else "Bench",
                text=f"{LINE} ({t})",
                at=opened + timedelta(seconds=5 * t),
            )
            async with db.session() as session:
                await record_turn(session, agent=handle, channel=channel, turn=turn)
            last = turn.turn_id
        seeded.append(Seeded(handle, channel, conversation, last, turns))
    return seeded


async def _run(stack: BenchStack, *, count: int, turns: int, shared: bool, encoder: str) -> str:
    settings = stack.settings(encoder=encoder)
    provider = ScriptedProvider(Script(rules=RULES))
    deps = build_dependencies(settings, providers={ProviderName.SCRIPTED: provider}, dsn=stack.dsn)
    seeded = await _seed(deps.db, count=count, turns=turns, shared=shared)
    queue = f"bench-{uuid.uuid4().hex[:8]}"
    latencies: list[float] = []

    async def consolidate(item: Seeded) -> ConsolidationResult:
        began = time.perf_counter()
        consolidation_id = new_ulid()
        result = await stack.client.execute_workflow(
            ConsolidationWorkflow.run,
            ConsolidationInput(
                consolidation_id=consolidation_id,
                agent=item.agent,
                reason=FormationReason.CLOSE,
                channel=item.channel,
                range=TurnRange(conversation_id=item.conversation_id, through_turn=item.last_turn),
            ),
            id=consolidation_workflow_id(consolidation_id),
            task_queue=queue,
        )
        latencies.append((time.perf_counter() - began) * 1000)
        return result

    async with build_worker(stack.client, deps, task_queue=queue):
        began = time.perf_counter()
        results = await asyncio.gather(*(consolidate(item) for item in seeded))
        elapsed = time.perf_counter() - began
    await deps.aclose()
    formed = sum(len(r.formed) for r in results)
    assert formed == count, f"formed {formed} of {count}"
    total = count * turns
    layout = "one channel" if shared else "independent"
    return (
        f"| {layout} | {encoder} | {count} x {turns} | {elapsed:.2f} | {total / elapsed:.0f} | "
        f"{count / elapsed:.1f} | {percentile(latencies, 0.5):.0f} | "
        f"{percentile(latencies, 0.95):.0f} |"
    )


async def main(count: int, turns: int) -> None:
    """Measure every layout and encoder on one private stack, then record the table."""
    async with bench_stack() as stack:
        rows = []
        for shared in (False, True):
            for encoder in ("none", "local"):
                rows.append(
                    await _run(stack, count=count, turns=turns, shared=shared, encoder=encoder)
                )
                print(rows[-1], flush=True)
    header = (
        "| layout | encoder | conversations x turns | wall s | turns/s | memories/s "
        "| p50 ms | p95 ms |\n|---|---|---|---|---|---|---|---|"
    )
    record(
        "Consolidation throughput",
        f"`python -m bench.consolidation_throughput --conversations {count} --turns {turns}`: "
        "zero-latency scripted model, in-process worker on a tuned dev server, dialog written "
        "to PostgreSQL first, one ConsolidationWorkflow per conversation started at once "
        "(claim, summarize, rate and classify concurrently, store, fill missing vectors).\n\n"
        f"{header}\n" + "\n".join(rows),
    )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--conversations", type=int, default=24)
    parser.add_argument("--turns", type=int, default=20)
    args = parser.parse_args()
    asyncio.run(main(args.conversations, args.turns))
