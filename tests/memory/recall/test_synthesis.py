"""Recall without a model: near-duplicate memories folded, and a memory holding a fact replaced
since marked with what the fact is now, for the people present only."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

from activities.memory.lines import annotate
from activities.memory.synthesis import deduplicated, marked
from schemas.events import ChannelRef, Speaker
from schemas.ids import new_ulid, ulid_from_parts
from schemas.memory import ScoreBand
from schemas.observations import ObservationProposal, ObservationSource
from schemas.recall import RetrievedMemory
from store.db import Database
from store.queries.observations import record_observation
from store.queries.people import resolve_speaker
from store.queries.supersession import Replaced, Span, replaced_facts
from tests.memory.conftest import NewAgent

T0 = datetime(2026, 11, 1, 9, 0, tzinfo=UTC)


def memory(summary: str, score: float, at: datetime = T0) -> RetrievedMemory:
    return RetrievedMemory(
        id=new_ulid(), summary=summary, band=ScoreBand.STRONG, score=score, created_at=at
    )


def turn(at: datetime) -> str:
    return ulid_from_parts(at, 0)


def test_a_near_duplicate_is_folded_into_the_better_ranked_memory() -> None:
    best = memory("I talked with Ada about her tomatoes; she grows them in Leeds.", 0.9)
    again = memory("I talked with Ada about her tomatoes, she grows them in Leeds!", 0.7)
    other = memory("Ada asked me about the bus to York.", 0.5)
    assert deduplicated([best, again, other]) == [best, other]


def test_a_replaced_fact_is_said_on_the_line_of_the_memory_that_holds_it() -> None:
    old = memory("Ada told me she lives in Leeds.", 0.9)
    [line] = marked([old], [Replaced(old.id, "home_city", "lives in Leeds", "lives in Bath")])
    shown = annotate(line, ZoneInfo("UTC"))
    assert shown.endswith(
        '(since changed: home city is now "lives in Bath" (was "lives in Leeds"))'
    )


async def test_the_store_finds_facts_replaced_inside_a_memorys_turns(
    db: Database, new_agent: NewAgent
) -> None:
    agent = await new_agent()
    people = []
    async with db.session() as session:
        for speaker in ("ada", "bob"):
            found = await resolve_speaker(
                session,
                agent=agent,
                channel=ChannelRef(service="chat", channel="lobby"),
                speaker=Speaker(speaker_id=speaker),
                seen_at=T0,
            )
            people.append(found.person_id)
        await session.commit()
    ada, bob = people

    async def learn(person: str, value: str, at: datetime, supersedes: str | None = None) -> str:
        source = ObservationSource(
            conversation_id=new_ulid(), turn_first=turn(at), turn_last=turn(at)
        )
        proposal = ObservationProposal(
            person_id=person,
            type="home_city",
            value=value,
            trust="self",
            observed_at=at,
            source=source,
        )
        async with db.session() as session:
            return await record_observation(
                session, agent=agent, proposal=proposal, embedding=None, supersedes=supersedes
            )

    leeds = await learn(ada, "lives in Leeds", T0)
    await learn(ada, "lives in Bath", T0 + timedelta(days=3), supersedes=leeds)
    york = await learn(bob, "lives in York", T0)
    await learn(bob, "lives in Hull", T0 + timedelta(days=3), supersedes=york)

    holds = Span("m-old", turn(T0 - timedelta(minutes=5)), turn(T0 + timedelta(minutes=5)))
    later = Span("m-new", turn(T0 + timedelta(days=3)), turn(T0 + timedelta(days=3, minutes=1)))
    replaced = await replaced_facts(db.lane, agent=agent, spans=[holds, later], present=[ada])
    # Bob is not present: what he said stays out, even in a memory that holds it.
    assert replaced == [Replaced("m-old", "home_city", "lives in Leeds", "lives in Bath")]
