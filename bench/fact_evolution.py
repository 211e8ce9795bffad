"""Fact evolution: the final active set after many changes, and context cost at 10,000 facts.

Part 1 (the mechanism). ``--people`` people (default 200), each with 2-3 starting facts and
then 3-6 changes drawn with a fixed seed: a move or a new job (UPDATE), a new kind of fact
(ADD), a retraction (DELETE) or a repeat of what is known (NOOP). Each statement goes through
the real extraction and reconciliation code (prompts, the gateway, reply parsing, candidate
search in PostgreSQL, verdict application) with a scripted model that answers as a perfect
model would: it extracts the statement's fact, and names the held note the change concerns
by the label the prompt gave it. So the figures measure the mechanism, not a model: whether
the right candidate is shown, whether verdicts land, whether history survives. Reported:
precision and recall of the final active set against ground truth, and superseded records
wrongly lost (target 0).

Part 2 (the reply's path). 10,000 observations over 500 people (COPY), context assembly with
the built-in sources with and without the observations source, interleaved; p50 added.

Usage: ``python -m bench.fact_evolution [--people 200] [--inputs 300] [--no-record]``
"""

from __future__ import annotations

import argparse
import asyncio
import io
import json
import random
import re
import tempfile
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path

import psycopg
from sqlmodel import select

from activities.context.assembler import ContextAssembler
from activities.context.model import ContextSource
from activities.context.sources import ClockSource, ConstraintsSource, DialogSource, PersonaSource
from activities.gateway.base import DeltaCallback, Provider
from activities.observations.activities import ObservationActivities
from activities.observations.source import ObservationsSource
from bench.harness import percentile, record
from schemas.activation import AssembleContextInput
from schemas.agents import AgentCreate
from schemas.events import ChannelRef, InboundEvent, Speaker
from schemas.ids import new_ulid
from schemas.models import ModelBinding, ModelRequest, ModelResponse, ProviderName, TokenUsage
from schemas.observations import ObservationSettings, ReconcileInput
from schemas.settings import Settings
from store.db import Database
from store.embedded import EmbeddedPostgres
from store.migrate import upgrade
from store.queries.agents import create_agent
from store.queries.memory_formation import RangeTurn
from store.tables import Person
from store.tables.observations import ObservationRow
from temporal.devserver import free_port
from workers.build import build_dependencies

AGENT = "bench-facts"
CITIES = ["Leeds", "York", "Bath", "Hull", "Derby", "Ely", "Wells", "Truro", "Ripon", "Perth"]
JOBS = ["nurse", "teacher", "pilot", "baker", "plumber", "editor", "chemist", "farmer"]
EXTRAS = {
    "pet": ["a dog", "a cat", "two rabbits", "a parrot"],
    "sibling": ["a sister", "a brother", "twin sisters"],
    "hobby": ["climbing", "chess", "rowing", "pottery"],
}
_LABEL = re.compile(r"^(F\d+): (\S+) = (.*) \(", re.MULTILINE)


@dataclass
class Change:
    """One statement: the fact it states and what reconciliation should do with it."""

    person: int
    type: str
    value: str
    action: str
    target: str | None = None  # the held value an UPDATE or DELETE concerns


@dataclass
class Truth:
    """Ground truth: what should be active, and every value ever held."""

    active: dict[tuple[int, str], str] = field(default_factory=dict)
    held: list[tuple[int, str, str]] = field(default_factory=list)


def history(people: int, rng: random.Random) -> tuple[list[Change], Truth]:
    """Each person's starting facts and 3-6 changes, with the expected end state."""
    changes: list[Change] = []
    truth = Truth()

    def apply(change: Change) -> None:
        key = (change.person, change.type)
        if change.action in ("ADD", "UPDATE"):
            truth.active[key] = change.value
            truth.held.append((change.person, change.type, change.value))
        elif change.action == "DELETE":
            del truth.active[key]
        changes.append(change)

    for p in range(people):
        apply(Change(p, "home_city", f"lives in {rng.choice(CITIES)}", "ADD"))
        apply(Change(p, "job", f"works as a {rng.choice(JOBS)}", "ADD"))
        for _ in range(rng.randint(3, 6)):
            held = {t: v for (q, t), v in truth.active.items() if q == p}
            kind = rng.choice(["move", "job", "add", "retract", "repeat"])
            if kind == "move" and "home_city" in held:
                new = rng.choice([c for c in CITIES if c not in held["home_city"]])
                apply(Change(p, "home_city", f"lives in {new}", "UPDATE", held["home_city"]))
            elif kind == "job" and "job" in held:
                new = rng.choice([j for j in JOBS if not held["job"].endswith(j)])
                apply(Change(p, "job", f"works as a {new}", "UPDATE", held["job"]))
            elif kind == "retract" and held:
                gone = rng.choice(sorted(held))
                apply(Change(p, gone, f"no longer: {held[gone]}", "DELETE", held[gone]))
            elif kind == "repeat" and held:
                same = rng.choice(sorted(held))
                apply(Change(p, same, held[same], "NOOP"))
            else:
                free = [t for t in EXTRAS if t not in held]
                if not free:
                    continue
                kind_of = rng.choice(free)
                apply(Change(p, kind_of, f"has {rng.choice(EXTRAS[kind_of])}", "ADD"))
    return changes, truth


class Oracle(Provider):
    """Answers extraction with the current statement's fact, and reconciliation as it should."""

    name = ProviderName.SCRIPTED.value

    def __init__(self) -> None:
        self.change: Change | None = None
        self.calls = 0
        self.unseen_targets = 0

    async def complete(
        self, request: ModelRequest, binding: ModelBinding, *, on_delta: DeltaCallback | None = None
    ) -> ModelResponse:
        """The reply a perfect model would give to this request."""
        assert self.change is not None
        self.calls += 1
        change = self.change
        if "note durable facts" in request.system:
            fact = {"subject": "Pat", "type": change.type, "value": change.value, "trust": "self"}
            text = json.dumps({"facts": [fact]})
        else:
            shown = {
                value: label for label, _, value in _LABEL.findall(request.messages[0].content)
            }
            target = shown.get(change.target or "")
            if change.action in ("UPDATE", "DELETE") and target is None:
                self.unseen_targets += 1  # the note the change concerns was not among those shown
            text = json.dumps({"action": change.action, "target": target, "reason": "scripted"})
        return ModelResponse(
            text=text,
            model="oracle",
            provider=ProviderName.SCRIPTED,
            finish_reason="stop",
            usage=TokenUsage(),
            latency_ms=0.0,
        )


async def evolve(dsn: str, home: Path, people: int, rng: random.Random) -> list[str]:
    """Run every statement through extraction and reconciliation; score the end state."""
    changes, truth = history(people, rng)
    oracle = Oracle()
    settings = Settings(
        home=home, provider="scripted", embedded=False, database_url=dsn, encoder="none"
    )
    deps = build_dependencies(settings, providers={ProviderName.SCRIPTED: oracle}, dsn=dsn)
    work = ObservationActivities(deps.db, deps.gateway, None, ObservationSettings())
    async with deps.db.session() as session:
        await create_agent(
            session, spec=AgentCreate(handle=AGENT, name="Bench", persona="A bench agent.")
        )
        ids = [new_ulid() for _ in range(people)]
        now = datetime.now(UTC)
        for person_id in ids:
            session.add(
                Person(
                    id=person_id, agent=AGENT, display_name="Pat", created_at=now, last_seen_at=now
                )
            )
        await session.commit()
    started = time.perf_counter()
    t0 = datetime(2026, 1, 1, tzinfo=UTC)
    for n, change in enumerate(changes):
        oracle.change = change
        at = t0 + timedelta(minutes=n)
        turn = RangeTurn(
            id=new_ulid(),
            role="person",
            speaker_name="Pat",
            person_id=ids[change.person],
            text=f"About me: {change.value}",
            at=at,
        )
        extracted = await work.propose([turn], agent_name="Bench", conversation_id=None)
        for proposal in extracted.proposals:
            await work.reconcile(
                ReconcileInput(agent=AGENT, observation_id=new_ulid(), proposal=proposal)
            )
    seconds = time.perf_counter() - started
    async with deps.db.session() as session:
        rows = (
            await session.exec(select(ObservationRow).where(ObservationRow.agent == AGENT))
        ).all()
    await deps.aclose()
    index = {person_id: n for n, person_id in enumerate(ids)}
    got = {
        (index[r.person_id], r.type, r.value) for r in rows if r.status == "active" and r.person_id
    }
    want = {(p, t, v) for (p, t), v in truth.active.items()}
    kept = {(index[r.person_id], r.type, r.value) for r in rows if r.person_id}
    lost = [h for h in truth.held if h not in kept]
    superseded = sum(1 for r in rows if r.status == "superseded")
    expected_superseded = len(truth.held) - len(want)
    hits = len(got & want)
    counts = {
        a: sum(1 for c in changes if c.action == a) for a in ("ADD", "UPDATE", "DELETE", "NOOP")
    }
    tally = ", ".join(f"{k} {v}" for k, v in counts.items())
    precision = hits / max(1, len(got))
    return [
        f"{people} people, {len(changes)} statements ({tally}), "
        f"{oracle.calls} model calls, {seconds:.1f} s ({seconds / len(changes) * 1000:.1f} ms "
        "per statement, extraction and reconciliation).",
        "",
        "| measure | value |",
        "|---|---|",
        f"| precision of the final active set | {precision:.4f} ({hits}/{len(got)}) |",
        f"| recall of the final active set | {hits / max(1, len(want)):.4f} ({hits}/{len(want)}) |",
        f"| superseded records wrongly lost (target 0) | {len(lost)} |",
        f"| superseded records kept / expected | {superseded} / {expected_superseded} |",
        f"| changes whose target was not among the candidates shown | {oracle.unseen_targets} |",
    ]


def load_observations(dsn: str, rng: random.Random) -> list[str]:
    """10,000 observations over 500 people, by COPY; returns the people's IDs."""
    people = [new_ulid() for _ in range(500)]
    t0 = datetime(2025, 1, 1, tzinfo=UTC)
    trusts = ["self", "self", "told", "inferred", "operator"]
    out = io.StringIO()
    for n in range(10_000):
        person = people[n % len(people)]
        kind = rng.choice(["home_city", "job", "hobby", "pet", "sibling", "plan", "likes"])
        at = (t0 + timedelta(minutes=n)).isoformat()
        out.write(
            f"{new_ulid()}\t{AGENT}\t{person}\t{kind}\tsomething about them number {n}\t{at}\t"
            f"{rng.choice(trusts)}\tactive\t{at}\n"
        )
    with (
        psycopg.connect(dsn.replace("postgresql+psycopg://", "postgresql://")) as conn,
        conn.cursor() as cur,
    ):
        now = datetime.now(UTC).isoformat()
        with cur.copy(
            "COPY people (id, agent, display_name, created_at, last_seen_at) FROM STDIN"
        ) as copy:
            copy.write(
                "".join(f"{p}\t{AGENT}\tPerson {n}\t{now}\t{now}\n" for n, p in enumerate(people))
            )
        cur.execute("DELETE FROM observations WHERE agent = %s", (AGENT,))
        with cur.copy(
            "COPY observations (id, agent, person_id, type, value, observed_at, trust, status,"
            " created_at) FROM STDIN"
        ) as copy:
            copy.write(out.getvalue())
        cur.execute("ANALYZE observations")
    return people


async def context_cost(dsn: str, home: Path, people: list[str], inputs: int) -> list[str]:
    """Context assembly p50/p95 with the observations source off and on, interleaved."""
    db = Database(dsn)
    settings = Settings(home=home, provider="scripted", embedded=False, database_url=dsn)
    from activities.gateway.registry import ModelRegistry

    registry = ModelRegistry.from_settings(settings)
    base: list[ContextSource] = [
        PersonaSource(),
        ConstraintsSource(),
        ClockSource(),
        DialogSource(db),
    ]
    off = ContextAssembler(db, registry, base)
    on = ContextAssembler(db, registry, [*base, ObservationsSource(db)])
    channel = ChannelRef(service="terminal", channel="bench")
    rng = random.Random(16)

    def data() -> AssembleContextInput:
        return AssembleContextInput(
            activation_id=new_ulid(),
            agent=AGENT,
            conversation_id=new_ulid(),
            channel=channel,
            event=InboundEvent(
                event_id=new_ulid(), channel=channel, speaker=Speaker(speaker_id="p"), text="hi"
            ),
            person_id=rng.choice(people),
            now=datetime.now(UTC),
        )

    times: dict[str, list[float]] = {"off": [], "on": []}
    for _ in range(20):
        await on.assemble(data())
    for _ in range(inputs):
        for label, assembler in (("off", off), ("on", on)):
            started = time.perf_counter()
            await assembler.assemble(data())
            times[label].append((time.perf_counter() - started) * 1000)
    await db.aclose()
    p50 = {k: percentile(v, 0.5) for k, v in times.items()}
    return [
        "| configuration | inputs | p50 ms | p95 ms |",
        "|---|---|---|---|",
        *(
            f"| observations {label} | {len(v)} | {percentile(v, 0.5):.2f} "
            f"| {percentile(v, 0.95):.2f} |"
            for label, v in times.items()
        ),
        "",
        f"p50 added by observations (20 facts about the speaker, 10,000 in all): "
        f"{p50['on'] - p50['off']:+.2f} ms.",
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--people", type=int, default=200)
    parser.add_argument("--inputs", type=int, default=300)
    parser.add_argument("--no-record", action="store_true", help="Print, do not append.")
    args = parser.parse_args()
    rng = random.Random(15)
    with tempfile.TemporaryDirectory(prefix="persyn-bench-facts-") as tmp:
        home = Path(tmp)
        home.chmod(0o755)
        pg = EmbeddedPostgres(home / "pg", free_port(), home / "logs" / "pg.log")
        pg.start()
        try:
            upgrade(pg.dsn)
            evolution = asyncio.run(evolve(pg.dsn, home, args.people, rng))
            people = load_observations(pg.dsn, rng)
            cost = asyncio.run(context_cost(pg.dsn, home, people, args.inputs))
        finally:
            pg.stop()
    body = "\n".join(
        [
            f"`python -m bench.fact_evolution --people {args.people} --inputs {args.inputs}` "
            "(seed 15; scripted model answering as a perfect one; no encoder, so candidates "
            "rank by type, then recency).",
            "",
            *evolution,
            "",
            *cost,
        ]
    )
    if args.no_record:
        print(body)
    else:
        record("Fact evolution: observations through extraction and reconciliation", body)


if __name__ == "__main__":
    main()
