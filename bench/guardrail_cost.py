"""Background guardrail cost per exchange: CPU of one evaluation at 100 rules (and the defaults).

One agent on an embedded PostgreSQL has talked with one person for a day: 300 of their
messages over 6 conversations on 2 channels, 60 more messages from others on the channel,
and each exchange made 3 tool calls. Each measured exchange is a fresh input and reply on top
of that; ``GuardrailActivities.evaluate`` (what the guardrail run's activity does: read the
history the rules need, run every rule, record the firings) runs once per exchange, in this
process. CPU is this process's (``time.process_time``: the worker's share; PostgreSQL's own
is not counted); the pure rule evaluation over the loaded history is timed apart.

Usage: ``python -m bench.guardrail_cost [--exchanges 200] [--no-record]``
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from activities.guardrails.activities import GuardrailActivities
from activities.guardrails.history import Turn, needs
from activities.guardrails.loading import load_history
from activities.guardrails.patterns import evaluate_all
from activities.guardrails.rules import default_rules
from bench.harness import percentile, record
from schemas.agents import AgentCreate
from schemas.dialog import DialogTurn, Role
from schemas.events import ChannelRef, Speaker
from schemas.guardrails import GuardrailInput, GuardrailRule, GuardrailRuleSet, GuardrailSettings
from schemas.ids import new_ulid, ulid_from_parts
from store.db import Database
from store.embedded import EmbeddedPostgres
from store.migrate import upgrade
from store.queries.agents import create_agent
from store.queries.dialog import open_conversation, record_turn
from store.queries.people import resolve_speaker
from store.tables.autonomy import ToolCallRow
from temporal.devserver import free_port

AGENT = "bench-guard"
CHANNELS = [ChannelRef(service="chat", channel="main"), ChannelRef(service="chat", channel="side")]
WORDS = [
    *("the", "weather", "invoice", "garden", "tomorrow", "meeting", "please", "thanks"),
    *("could", "you", "check", "book", "train", "dinner", "recipe", "music", "project"),
    *("deadline", "review", "draft", "photo", "holiday"),
]


def hundred_rules() -> GuardrailRuleSet:
    """100 background rules: 20 of each pattern kind, with varied parameters."""
    rules: list[dict[str, Any]] = []
    for n in range(20):
        rules.append(
            {
                "id": f"conflict-{n}",
                "pattern": {
                    "kind": "escalating_conflict",
                    "turns": 4 + n % 8,
                    "rising": 2 + n % 3,
                    "threshold": 0.3 + (n % 5) / 10,
                },
                "actions": ["notify"],
            }
        )
        rules.append(
            {
                "id": f"prohibited-{n}",
                "pattern": {
                    "kind": "prohibited_requests",
                    "phrases": [rf"\bforbidden{n}-{k}\b.{{0,20}}\bthing\b" for k in range(5)],
                    "count": 2 + n % 4,
                    "window_hours": 1 + n,
                },
                "actions": ["notify"],
            }
        )
        rules.append(
            {
                "id": f"burst-{n}",
                "pattern": {
                    "kind": "message_burst",
                    "per": "person" if n % 2 else "channel",
                    "messages": 30 + n,
                    "window_seconds": 30 + 30 * n,
                },
                "actions": ["notify"],
            }
        )
        rules.append(
            {
                "id": f"injection-{n}",
                "pattern": {"kind": "prompt_injection", "min_signals": 1 + n % 3},
                "actions": ["notify"],
            }
        )
        rules.append(
            {
                "id": f"secrets-{n}",
                "pattern": {
                    "kind": "sensitive_data",
                    "detect": ["card_number", "api_key", "private_key", "email", "phone"][
                        : 1 + n % 5
                    ],
                },
                "actions": ["notify"],
            }
        )
    return GuardrailRuleSet.model_validate({"rules": rules})


def sentence(rng: random.Random) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(rng.randint(6, 30))).capitalize() + "."


async def seed(db: Database, rng: random.Random, now: datetime) -> tuple[str, str]:
    """The day's history; returns the person's ID and the open conversation's ID."""
    async with db.session() as session:
        await create_agent(session, spec=AgentCreate(handle=AGENT, name="Bench", persona="A."))
    people: dict[str, str] = {}
    for channel in CHANNELS:
        for speaker in ("ada", *(f"other{k}" for k in range(5))):
            async with db.session() as session:
                found = await resolve_speaker(
                    session,
                    agent=AGENT,
                    channel=channel,
                    speaker=Speaker(speaker_id=speaker, display_name=speaker.title()),
                    seen_at=now - timedelta(days=1),
                )
            # One person across both channels for Ada: the first identity's person.
            people.setdefault(speaker, found.person_id)
    person = people["ada"]
    conversation = ""
    for number in range(6):
        channel = CHANNELS[number % 2]
        start = now - timedelta(hours=24 - 4 * number)
        conversation = ulid_from_parts(start, rng.getrandbits(80))
        async with db.session() as session:
            await open_conversation(
                session, conversation_id=conversation, agent=AGENT, channel=channel, opened_at=start
            )
        for k in range(60):
            at = start + timedelta(seconds=40 * k)
            speaker = person if k % 6 else people[f"other{k % 5}"]
            for role, who, text in (
                (Role.PERSON, speaker, sentence(rng)),
                (Role.AGENT, AGENT, sentence(rng)),
            ):
                turn = DialogTurn(
                    turn_id=ulid_from_parts(at, rng.getrandbits(80)),
                    conversation_id=conversation,
                    role=role,
                    speaker_id=who,
                    speaker_name="x",
                    text=text,
                    at=at,
                )
                async with db.session() as session:
                    await record_turn(session, agent=AGENT, channel=channel, turn=turn)
    return person, conversation


async def exchange(
    db: Database, rng: random.Random, person: str, conversation: str, at: datetime
) -> GuardrailInput:
    """A fresh input, reply and three tool results in the open conversation."""
    activation = new_ulid()
    turns = []
    for role, who in ((Role.PERSON, person), (Role.AGENT, AGENT)):
        turn = DialogTurn(
            turn_id=new_ulid(),
            conversation_id=conversation,
            role=role,
            speaker_id=who,
            speaker_name="x",
            text=sentence(rng),
            at=at,
        )
        async with db.session() as session:
            await record_turn(session, agent=AGENT, channel=CHANNELS[1], turn=turn)
        turns.append(turn)
    async with db.session() as session:
        for seq in range(3):
            session.add(
                ToolCallRow(
                    id=new_ulid(),
                    agent=AGENT,
                    prompt_id=new_ulid(),
                    activation_id=activation,
                    round=0,
                    seq=seq,
                    provider_call_id=f"c{seq}",
                    name="read_url",
                    arguments={},
                    result=" ".join(sentence(rng) for _ in range(20)),
                    created_at=at,
                )
            )
        await session.commit()
    return GuardrailInput(
        activation_id=activation,
        agent=AGENT,
        conversation_id=conversation,
        channel=CHANNELS[1],
        person_id=person,
        inbound_turn_id=turns[0].turn_id,
        reply_turn_id=turns[1].turn_id,
        at=at,
    )


async def measure(dsn: str, exchanges: int) -> list[str]:
    rng = random.Random(17)
    now = datetime.now(UTC)
    db = Database(dsn, pool_size=2)
    lines = [
        "| rules | exchanges | CPU ms p50 | CPU ms p95 | CPU ms mean | wall ms p50 "
        "| rules only, CPU ms p50 | firings |",
        "|---|---|---|---|---|---|---|---|",
    ]
    try:
        person, conversation = await seed(db, rng, now)
        for label, rules in (("100", hundred_rules()), ("5 (defaults)", default_rules())):
            background = GuardrailRuleSet(rules=rules.active(blocking=False))
            activities = GuardrailActivities(db, background, GuardrailSettings())
            cpu: list[float] = []
            wall: list[float] = []
            pure: list[float] = []
            fired = 0
            for n in range(exchanges + 5):
                # One exchange every 30 s: a brisk conversation, not a burst.
                at = now + timedelta(seconds=30 * n)
                data = await exchange(db, rng, person, conversation, at)
                c0, w0 = time.process_time(), time.perf_counter()
                result = await activities.evaluate(data)
                c1, w1 = time.process_time(), time.perf_counter()
                if n < 5:
                    continue  # warm-up: connections, caches, compiled patterns
                cpu.append((c1 - c0) * 1000)
                wall.append((w1 - w0) * 1000)
                fired += len(result.firings)
                pure.append(await _rules_only(db, background.rules, data))
            lines.append(
                f"| {label} | {exchanges} | {percentile(cpu, 0.5):.2f} | "
                f"{percentile(cpu, 0.95):.2f} | {sum(cpu) / len(cpu):.2f} | "
                f"{percentile(wall, 0.5):.2f} | {percentile(pure, 0.5):.3f} | {fired} |"
            )
    finally:
        await db.aclose()
    return lines


async def _rules_only(db: Database, rules: list[GuardrailRule], data: GuardrailInput) -> float:
    """CPU ms of running the rules alone over the exchange's loaded history."""
    history = await load_history(
        db.lane,
        needs=needs(rules),
        agent=data.agent,
        now=data.at,
        conversation_id=data.conversation_id,
        channel_key=data.channel.key,
        person_id=data.person_id,
        activation_id=data.activation_id,
        inbound=Turn(
            id=data.inbound_turn_id, role="person", text=sentence(random.Random(1)), at=data.at
        ),
        reply=None,
    )

    start = time.process_time()
    evaluate_all(rules, history, on_error=lambda _: None)
    return (time.process_time() - start) * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--exchanges", type=int, default=200)
    parser.add_argument("--no-record", action="store_true", help="Print, do not append.")
    args = parser.parse_args()
    load_before = os.getloadavg()[0]
    with tempfile.TemporaryDirectory(prefix="persyn-bench-guard-") as tmp:
        home = Path(tmp)
        home.chmod(0o755)
        pg = EmbeddedPostgres(home / "pg", free_port(), home / "logs" / "pg.log")
        pg.start()
        try:
            upgrade(pg.dsn)
            lines = asyncio.run(measure(pg.dsn, args.exchanges))
        finally:
            pg.stop()
    body = "\n".join(
        [
            f"`python -m bench.guardrail_cost --exchanges {args.exchanges}`: one agent, one "
            "person with 300 messages over 6 conversations on 2 channels in the last day, 60 "
            "from others; each exchange adds an input, a reply and 3 tool results, then runs "
            "the guardrail evaluation activity (history read, every background rule, firings "
            "recorded) in-process. CPU is the worker process's (PostgreSQL's own not counted). "
            "100 rules: 20 each of escalating conflict, prohibited requests (5 phrases each), "
            "bursts, prompt injection (input and tool results) and sensitive data. "
            f"Load average (1 min): {load_before:.1f} before, {os.getloadavg()[0]:.1f} after.",
            "",
            *lines,
        ]
    )
    if args.no_record:
        print(body)
    else:
        record("Guardrail evaluation cost per exchange", body)


if __name__ == "__main__":
    main()
