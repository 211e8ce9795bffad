"""Autocommit sessions: the pre-model path's reads and one-statement writes, without a transaction.

They share the pool with transactional sessions, so a connection must go back to the pool
transactional again, and what each kind of session sees must not differ.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from psycopg.pq import TransactionStatus
from sqlalchemy import text
from sqlmodel import select

from schemas.dialog import DialogTurn, Role
from schemas.events import ChannelRef, Speaker
from schemas.ids import new_ulid
from schemas.records import ResolvedSpeaker
from store.db import Database
from store.queries.dialog import load_turns, open_conversation, record_turn
from store.queries.people import known_speaker, resolve_speaker
from store.tables import Channel, Person
from tests.harness import Harness

CHANNEL = ChannelRef(service="terminal", channel="autocommit")


async def test_a_connection_used_in_autocommit_goes_back_to_the_pool_transactional(
    harness: Harness,
) -> None:
    # A pool of one, so the transactional session below reuses the autocommit one's connection.
    db = Database(harness.db.dsn, pool_size=1)
    try:
        async with db.autocommit() as session:
            connection = await session.connection()
            await connection.execute(text("SELECT 1"))
            first = (await connection.get_raw_connection()).driver_connection
            assert first is not None
            assert first.autocommit
            assert first.info.transaction_status is TransactionStatus.IDLE
        async with db.session() as session:
            connection = await session.connection()
            await connection.execute(text("SELECT 1"))
            again = (await connection.get_raw_connection()).driver_connection
            assert again is first
            assert not again.autocommit
            assert again.info.transaction_status is TransactionStatus.INTRANS
    finally:
        await db.aclose()


async def test_a_turn_written_and_read_in_autocommit_matches_the_transactional_path(
    harness: Harness,
) -> None:
    agent = await harness.create_agent()
    now = datetime.now(UTC)
    conversation = new_ulid()
    async with harness.db.session() as session:
        person = await resolve_speaker(
            session,
            agent=agent.handle,
            channel=CHANNEL,
            speaker=Speaker(speaker_id="a"),
            seen_at=now,
        )
        await open_conversation(
            session,
            conversation_id=conversation,
            agent=agent.handle,
            channel=CHANNEL,
            opened_at=now,
        )
    turns = [
        DialogTurn(
            turn_id=new_ulid(),
            conversation_id=conversation,
            role=Role.PERSON,
            speaker_id=person.person_id,
            speaker_name=person.person_name,
            text=f"turn {i}",
            at=now,
        )
        for i in range(3)
    ]
    for turn in turns:
        async with harness.db.autocommit() as session:
            assert await record_turn(session, agent=agent.handle, channel=CHANNEL, turn=turn)
    async with harness.db.autocommit() as session:
        # A retry stores nothing twice.
        assert not await record_turn(session, agent=agent.handle, channel=CHANNEL, turn=turns[0])
    # Asked for in any order, returned in the order written; an unknown ID is no turn.
    wanted = [turns[2].turn_id, new_ulid(), turns[0].turn_id, turns[1].turn_id]
    read = await load_turns(harness.db.lane, turn_ids=wanted)
    async with harness.db.session() as session:
        counted = await session.connection()
        count = (
            await counted.execute(
                text("SELECT turns FROM conversations WHERE id = :id"), {"id": conversation}
            )
        ).scalar_one()
    assert read == turns
    assert count == 3


async def test_a_known_speaker_is_touched_in_one_statement_on_the_lane(harness: Harness) -> None:
    agent = await harness.create_agent()
    first = datetime.now(UTC)
    later = first + timedelta(minutes=5)
    speaker = Speaker(speaker_id="k", display_name="Kit")
    stranger = await known_speaker(
        harness.db.lane.rows, agent=agent.handle, channel=CHANNEL, speaker=speaker, seen_at=first
    )
    assert stranger is None
    async with harness.db.session() as session:
        created = await resolve_speaker(
            session, agent=agent.handle, channel=CHANNEL, speaker=speaker, seen_at=first
        )
    assert created.created
    renamed = Speaker(speaker_id="k", display_name="Kit B")
    known = await known_speaker(
        harness.db.lane.rows, agent=agent.handle, channel=CHANNEL, speaker=renamed, seen_at=later
    )
    assert known == ResolvedSpeaker(person_id=created.person_id, person_name="Kit B", created=False)
    async with harness.db.session() as session:
        person = await session.get(Person, created.person_id)
        channel = (
            await session.exec(
                select(Channel).where(Channel.agent == agent.handle, Channel.key == CHANNEL.key)
            )
        ).one()
    assert person is not None and person.last_seen_at == later
    assert channel.last_active_at == later and channel.last_person_id == created.person_id
