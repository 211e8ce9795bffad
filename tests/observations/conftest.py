"""Observation-test fixtures: the session's embedded PostgreSQL, an agent and its people."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass
from datetime import UTC, datetime

import pytest

from schemas.agents import AgentCreate
from schemas.events import ChannelRef, Speaker
from store.db import Database
from store.embedded import EmbeddedPostgres
from store.queries.agents import create_agent
from store.queries.people import resolve_speaker
from tests.harness import unique


@pytest.fixture(scope="session")
async def db(postgres: EmbeddedPostgres) -> AsyncIterator[Database]:
    database = Database(postgres.dsn, pool_size=4)
    yield database
    await database.aclose()


@dataclass
class Cast:
    """An agent of the test's own and two people it has met on one channel."""

    agent: str
    una: str
    ned: str


@pytest.fixture
async def cast(db: Database) -> Cast:
    handle = unique("obs")
    channel = ChannelRef(service="team", channel="general")
    now = datetime.now(UTC)
    async with db.session() as session:
        await create_agent(
            session, spec=AgentCreate(handle=handle, name="Obs Test", persona="A tester.")
        )
    ids: list[str] = []
    for speaker_id, name in (("u1", "Una"), ("u2", "Ned")):
        async with db.session() as session:
            found = await resolve_speaker(
                session,
                agent=handle,
                channel=channel,
                speaker=Speaker(speaker_id=speaker_id, display_name=name),
                seen_at=now,
            )
            ids.append(found.person_id)
    return Cast(agent=handle, una=ids[0], ned=ids[1])
