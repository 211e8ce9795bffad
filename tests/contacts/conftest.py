"""Contact-directory fixtures: the session's embedded PostgreSQL and an agent with two people."""

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

HOME = ChannelRef(service="terminal", channel="home")
WORK = ChannelRef(service="team", channel="work")
MET = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)


@pytest.fixture(scope="session")
async def db(postgres: EmbeddedPostgres) -> AsyncIterator[Database]:
    database = Database(postgres.dsn, pool_size=4)
    yield database
    await database.aclose()


@dataclass
class Pair:
    """An agent and the two records one human (Ada) left on two channels."""

    agent: str
    home: str
    work: str


async def meet(db: Database, agent: str, channel: ChannelRef, speaker: str, name: str) -> str:
    """The person ``speaker`` resolves to on ``channel`` (created on first contact)."""
    async with db.session() as session:
        resolved = await resolve_speaker(
            session,
            agent=agent,
            channel=channel,
            speaker=Speaker(speaker_id=speaker, display_name=name),
            seen_at=MET,
        )
    return resolved.person_id


@pytest.fixture
async def pair(db: Database) -> Pair:
    agent = unique("contacts")
    async with db.session() as session:
        await create_agent(
            session, spec=AgentCreate(handle=agent, name="Contacts Test", persona="A tester.")
        )
    home = await meet(db, agent, HOME, "ada", "Ada")
    work = await meet(db, agent, WORK, "U123", "Ada L.")
    return Pair(agent=agent, home=home, work=work)
