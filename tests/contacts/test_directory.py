"""The contact directory: a fold moves everything that names a person; bad input changes nothing."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import pytest
from sqlalchemy import text
from sqlmodel.ext.asyncio.session import AsyncSession

from schemas.contacts import ContactError
from schemas.events import ChannelRef
from schemas.text import InvalidTextError
from store.db import Database
from store.queries import directory
from store.queries.fold import PERSON_REFERENCES, RefKind
from store.queries.goals import put_fact
from store.queries.people import ensure_channel
from tests.contacts.conftest import HOME, MET, WORK, Pair, meet
from tests.memory.recall.records import add_memory

Attempt = Callable[[AsyncSession], Awaitable[object]]


async def rows(db: Database, sql: str, **params: Any) -> list[tuple[Any, ...]]:
    async with db.session() as session:
        result = await (await session.connection()).execute(text(sql), params)
        return [tuple(r) for r in result]


async def directory_state(db: Database, agent: str) -> list[tuple[Any, ...]]:
    """Everything curation can change, to show a refused request changed none of it."""
    return [
        *await rows(
            db,
            "SELECT id, display_name, preferred_channel, name_curated FROM people "
            "WHERE agent = :a ORDER BY id",
            a=agent,
        ),
        *await rows(
            db,
            "SELECT person_id, service, channel, speaker_id FROM identities "
            "WHERE agent = :a ORDER BY id",
            a=agent,
        ),
        *await rows(
            db, "SELECT person_id, kind, address FROM contact_addresses WHERE agent = :a", a=agent
        ),
        *await rows(db, "SELECT folded FROM contact_folds WHERE agent = :a", a=agent),
    ]


async def test_a_fold_moves_every_reference_and_is_audited(db: Database, pair: Pair) -> None:
    agent = pair.agent
    async with db.session() as session:
        await directory.attach_address(
            session, agent=agent, who=pair.work, kind="email", address="ada@example.org"
        )
        await put_fact(session, agent=agent, subject=pair.home, key="city", value="Lisbon", at=MET)
        await put_fact(session, agent=agent, subject=pair.work, key="city", value="Porto", at=MET)
        await put_fact(session, agent=agent, subject=pair.work, key="team", value="infra", at=MET)
        home_channel = await ensure_channel(session, agent=agent, channel=HOME, seen_at=MET)
        await session.commit()
    memory = await add_memory(
        db,
        agent=agent,
        channel_id=home_channel,
        summary="Ada and I planned the trip.",
        participants=[pair.work, pair.home],
    )

    async with db.session() as session:
        result = await directory.fold_contacts(
            session,
            agent=agent,
            folded="U123",  # by speaker ID
            survivor=pair.home,
            name="Ada Lovelace",
            by="operator-1",
            at=MET,
        )

    assert result.survivor == pair.home and result.folded == pair.work
    async with db.session() as session:
        ada = await directory.show_contact(session, agent=agent, who="ada lovelace")
    assert ada.person_id == pair.home and ada.name == "Ada Lovelace"
    assert {(i.service, i.channel, i.speaker_id) for i in ada.identities} == {
        ("terminal", "home", "ada"),
        ("team", "work", "U123"),
    }
    assert [(a.kind, a.address) for a in ada.addresses] == [("email", "ada@example.org")]
    assert await rows(db, "SELECT id FROM people WHERE id = :p", p=pair.work) == []
    # The survivor's fact wins a clash; the folded person's other facts move.
    facts = await rows(
        db, "SELECT subject, key, value FROM quick_facts WHERE agent = :a ORDER BY key", a=agent
    )
    assert facts == [(pair.home, "city", "Lisbon"), (pair.home, "team", "infra")]
    # Participants name the survivor once, in the order they joined.
    assert await rows(db, "SELECT participants FROM memory_records WHERE id = :m", m=memory) == [
        ([pair.home],)
    ]
    assert await rows(
        db,
        "SELECT folded, survivor, name, folded_by, folded_at FROM contact_folds WHERE agent = :a",
        a=agent,
    ) == [(pair.work, pair.home, "Ada Lovelace", "operator-1", MET)]
    # A channel's name for her no longer replaces the operator's.
    await meet(db, agent, WORK, "U123", "ada.l")
    async with db.session() as session:
        again = await directory.show_contact(session, agent=agent, who=pair.home)
    assert again.name == "Ada Lovelace"


def test_every_reference_is_a_column_of_a_known_kind() -> None:
    seen = {(ref.table, ref.column) for ref in PERSON_REFERENCES}
    assert len(seen) == len(PERSON_REFERENCES)
    assert ("identities", "person_id") in seen and ("memory_records", "participants") in seen
    assert all(ref.kind in RefKind for ref in PERSON_REFERENCES)


HOSTILE_NAMES = [
    pytest.param("Ada\x00Lovelace", "NUL", id="nul"),
    pytest.param("A" * 10_000, "10,000 characters", id="10kB"),
    pytest.param("Ada \u202eecalevoL", "U+202E", id="rtl-override"),
    pytest.param("Ada\nLovelace", "one line", id="newline"),
]


@pytest.mark.parametrize(("name", "says"), HOSTILE_NAMES)
async def test_hostile_names_are_refused_in_one_line_and_change_nothing(
    db: Database, pair: Pair, name: str, says: str
) -> None:
    before = await directory_state(db, pair.agent)
    attempts: list[Attempt] = [
        lambda s: directory.rename_contact(s, agent=pair.agent, who=pair.home, name=name),
        lambda s: directory.fold_contacts(
            s, agent=pair.agent, folded=pair.work, survivor=pair.home, name=name, by="op", at=MET
        ),
        lambda s: directory.attach_identity(
            s, agent=pair.agent, who=pair.home, channel=HOME, speaker_id=name
        ),
    ]
    for attempt in attempts:
        async with db.session() as session:
            with pytest.raises(InvalidTextError) as refused:
                await attempt(session)
        assert says in str(refused.value) and "\n" not in str(refused.value)
    assert await directory_state(db, pair.agent) == before


async def test_folding_into_itself_a_missing_survivor_and_an_unknown_identity_are_refused(
    db: Database, pair: Pair
) -> None:
    before = await directory_state(db, pair.agent)
    cases: list[tuple[Attempt, str]] = [
        (
            lambda s: directory.fold_contacts(
                s, agent=pair.agent, folded="U123", survivor="Ada L.", name=None, by="op", at=MET
            ),
            "cannot be folded into themselves",
        ),
        (
            lambda s: directory.fold_contacts(
                s, agent=pair.agent, folded=pair.work, survivor="Grace", name=None, by="op", at=MET
            ),
            "has no contact 'Grace'",
        ),
        (
            lambda s: directory.detach_identity(
                s, agent=pair.agent, channel=WORK, speaker_id="U999"
            ),
            "no contact of",
        ),
        (
            lambda s: directory.attach_identity(
                s, agent=pair.agent, who=pair.home, channel=WORK, speaker_id="U123"
            ),
            "already belongs to Ada L.",
        ),
        (
            lambda s: directory.prefer_channel(
                s,
                agent=pair.agent,
                who=pair.home,
                channel=ChannelRef(service="team", channel="work"),
            ),
            "has no identity on team:work",
        ),
    ]
    for attempt, says in cases:
        async with db.session() as session:
            with pytest.raises(ContactError) as refused:
                await attempt(session)
        assert says in str(refused.value) and "\n" not in str(refused.value)
    assert await directory_state(db, pair.agent) == before


async def test_detach_is_forward_looking(db: Database, pair: Pair) -> None:
    async with db.session() as session:
        name = await directory.detach_identity(
            session, agent=pair.agent, channel=WORK, speaker_id="U123"
        )
    assert name == "Ada L."
    # The old record stays (with its history); the next message on the identity is someone new.
    newcomer = await meet(db, pair.agent, WORK, "U123", "Ada L.")
    assert newcomer not in (pair.work, pair.home)
    assert await rows(db, "SELECT id FROM people WHERE id = :p", p=pair.work) == [(pair.work,)]
