"""Resolving speakers: one person per identity, created once, clocks that never run backwards."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta

from sqlmodel import select

from schemas.events import ChannelRef, Speaker
from store.queries.people import resolve_speaker
from store.tables import Channel, Person
from tests.harness import Harness


async def test_a_speaker_is_one_person_even_when_first_seen_concurrently(
    harness: Harness,
) -> None:
    agent = await harness.create_agent()
    channel = ChannelRef(service="team", channel="general")
    now = datetime.now(UTC)

    async def resolve() -> str:
        async with harness.db.session() as session:
            found = await resolve_speaker(
                session,
                agent=agent.handle,
                channel=channel,
                speaker=Speaker(speaker_id="u1", display_name="Una"),
                seen_at=now,
            )
            return found.person_id

    ids = await asyncio.gather(*(resolve() for _ in range(5)))
    assert len(set(ids)) == 1
    async with harness.db.session() as session:
        people = (await session.exec(select(Person).where(Person.agent == agent.handle))).all()
    assert [p.display_name for p in people] == ["Una"]


async def test_older_traffic_never_moves_last_seen_backwards(harness: Harness) -> None:
    agent = await harness.create_agent()
    channel = ChannelRef(service="team", channel="general")
    now = datetime.now(UTC)
    async with harness.db.session() as session:
        first = await resolve_speaker(
            session,
            agent=agent.handle,
            channel=channel,
            speaker=Speaker(speaker_id="u1"),
            seen_at=now,
        )
    async with harness.db.session() as session:
        await resolve_speaker(
            session,
            agent=agent.handle,
            channel=channel,
            speaker=Speaker(speaker_id="u1"),
            seen_at=now - timedelta(days=30),
        )
    async with harness.db.session() as session:
        person = await session.get(Person, first.person_id)
        row = (
            await session.exec(
                select(Channel).where(Channel.agent == agent.handle, Channel.key == channel.key)
            )
        ).one()
    assert person is not None and person.last_seen_at == now
    assert row.last_active_at == now
