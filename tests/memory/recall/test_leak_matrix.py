"""No leak: channels x channel groups x sensitivity x people present, generated.

One agent holds a record for every (channel, sensitivity, set of participants); a forgotten
copy of each visible-looking record and a neighbour agent's records sit beside them. For every
channel and every set of people present, recall (by vector and by words) and remember harder
must return exactly the records an oracle written from the rules allows: nothing more (a
leak), nothing less (a record that could never be recalled).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

import pytest

from activities.memory.encoder import Encoder
from activities.memory.encoders.local import LocalEncoder
from activities.memory.encoders.null import NullEncoder
from activities.memory.recall import MemoryRecall
from activities.memory.remember import OutOfReachError, remember_harder
from schemas.events import ChannelRef
from schemas.ids import new_ulid
from schemas.memory import MemorySettings
from store.db import Database
from tests.memory.recall.records import NOW, add_channel, add_memory, new_agent

# Channels and their memory groups: b and c share "home", d is alone in "work", a and e
# share nothing.
GROUPS: dict[str, str | None] = {"a": None, "b": "home", "c": "home", "d": "work", "e": None}
PEOPLE = {name: new_ulid() for name in ("ada", "bob", "cy")}
PARTICIPANT_SETS = [("ada",), ("bob",), ("ada", "bob"), ("ada", "bob", "cy")]
SENSITIVITIES = ["public", "private", "confidential", "restricted"]
PRESENT_SETS = [("ada",), ("bob",), ("cy",), ("ada", "bob"), ("ada", "bob", "cy")]


def channel(name: str) -> ChannelRef:
    return ChannelRef(service="team", channel=f"room-{name}")


def may_see(sensitivity: str, participants: tuple[str, ...], present: tuple[str, ...]) -> bool:
    """The oracle, written out from the rules in schemas/memory.py."""
    if sensitivity == "public":
        return True
    if sensitivity == "private":
        return all(person in participants for person in present)
    if sensitivity == "confidential":
        return len(present) == 1 and present[0] in participants
    return False


def same_compartment(record_channel: str, current: str) -> bool:
    group = GROUPS[current]
    return record_channel == current or (group is not None and GROUPS[record_channel] == group)


@dataclass
class World:
    agent: str
    # record ID -> (channel, sensitivity, participants)
    records: dict[str, tuple[str, str, tuple[str, ...]]] = field(default_factory=dict)
    untouchable: set[str] = field(default_factory=set)

    def allowed(self, current: str, present: tuple[str, ...]) -> set[str]:
        return {
            record_id
            for record_id, (where, sensitivity, participants) in self.records.items()
            if same_compartment(where, current) and may_see(sensitivity, participants, present)
        }


@pytest.fixture(scope="module")
async def world(db: Database, encoder: LocalEncoder) -> World:
    agent, neighbour = await new_agent(db, "leak"), await new_agent(db, "leak")
    built = World(agent=agent)
    cases = list(itertools.product(GROUPS, SENSITIVITIES, PARTICIPANT_SETS))
    summaries = [
        f"In room {where} with {' and '.join(people)} I talked about the garden ({level})."
        for where, level, people in cases
    ]
    vectors = await encoder.encode(summaries)
    for name, group in GROUPS.items():
        channel_id = await add_channel(db, agent, channel(name), group=group)
        # The neighbour uses the same channel keys and group names: nothing is shared.
        neighbour_channel = await add_channel(db, neighbour, channel(name), group=group)
        for people in PARTICIPANT_SETS:
            built.untouchable.add(
                await add_memory(
                    db,
                    agent=neighbour,
                    channel_id=neighbour_channel,
                    summary=f"The neighbour's garden talk in room {name}.",
                    vector=vectors[0],
                    embed_model=encoder.name,
                    sensitivity="public",
                    participants=[PEOPLE[p] for p in people],
                )
            )
        for (where, level, people), summary, vector in zip(cases, summaries, vectors, strict=True):
            if where != name:
                continue
            common: dict[str, Any] = {
                "agent": agent,
                "channel_id": channel_id,
                "summary": summary,
                "vector": vector,
                "embed_model": encoder.name,
                "sensitivity": level,
                "participants": [PEOPLE[p] for p in people],
            }
            record_id = await add_memory(db, **common, created_at=NOW - timedelta(days=1))
            built.records[record_id] = (where, level, people)
            forgotten = await add_memory(db, **common, forgotten_at=NOW)
            built.untouchable.add(forgotten)
    return built


CASES = [
    pytest.param(mode, current, present, id=f"{mode}-{current}-{'+'.join(present)}")
    for mode in ("vector", "words")
    for current in GROUPS
    for present in PRESENT_SETS
]


@pytest.mark.parametrize(("mode", "current", "present"), CASES)
async def test_recall_returns_exactly_what_the_rules_allow(
    db: Database,
    encoder: LocalEncoder,
    world: World,
    mode: str,
    current: str,
    present: tuple[str, ...],
) -> None:
    chosen: Encoder = encoder if mode == "vector" else NullEncoder()
    # Room enough for every record, so "nothing less" is tested too.
    settings = MemorySettings(recall_candidates=500, recall_max_candidates=500)
    surfaced = await MemoryRecall(db, chosen, settings).recall(
        agent=world.agent,
        channel_key=channel(current).key,
        present=[PEOPLE[p] for p in present],
        query="What did we say about the garden?",
        now=NOW,
        context_window=8192,
    )
    got = {m.id for m in surfaced.records} if surfaced is not None else set()
    allowed = world.allowed(current, present)

    assert not got & world.untouchable, "a forgotten or another agent's record surfaced"
    assert got - allowed == set(), "leak"
    assert allowed - got == set(), "an allowed record was not retrievable"
    assert allowed, "every case should have something to see (public records at least)"


@pytest.mark.parametrize(
    ("current", "present"),
    [(c, p) for c in GROUPS for p in PRESENT_SETS],
    ids=lambda value: value if isinstance(value, str) else "+".join(value),
)
async def test_remember_harder_from_a_conversation_obeys_the_same_fences(
    db: Database, world: World, current: str, present: tuple[str, ...]
) -> None:
    allowed = world.allowed(current, present)
    reachable: set[str] = set()
    for record_id in world.records:
        try:
            await remember_harder(
                db,
                agent=world.agent,
                record_id=record_id,
                channel=channel(current),
                participants=[PEOPLE[p] for p in present],
            )
        except OutOfReachError:
            continue
        reachable.add(record_id)
    assert reachable == allowed
