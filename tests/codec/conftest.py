"""Codec fixtures: the session's PostgreSQL, a fresh keyring and agents of one's own."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable

import pytest

from schemas.agents import AgentCreate
from schemas.codec import get_codec_settings
from store.db import Database
from store.embedded import EmbeddedPostgres
from store.queries.agents import create_agent
from temporal.codec import AgentPayloadCodec
from temporal.keyring import MASTER_KEY_FILE, Keyring, master_key
from tests.harness import Stack, unique

NewAgent = Callable[[], Awaitable[str]]


@pytest.fixture(scope="session")
async def codec_db(postgres: EmbeddedPostgres) -> AsyncIterator[Database]:
    database = Database(postgres.dsn, pool_size=2)
    yield database
    await database.aclose()


@pytest.fixture(scope="session")
def master(stack: Stack) -> bytes:
    """The master key every client of the session uses (one deployment has one)."""
    return master_key(stack.home / MASTER_KEY_FILE, None)


@pytest.fixture
def keyring(postgres: EmbeddedPostgres, master: bytes) -> Keyring:
    """A keyring of its own (not the process's shared one), so caches start empty."""
    return Keyring(postgres.dsn, master, cache_seconds=get_codec_settings().key_cache_seconds)


@pytest.fixture
def codec(keyring: Keyring) -> AgentPayloadCodec:
    return AgentPayloadCodec(keyring)


@pytest.fixture
def new_agent(codec_db: Database) -> NewAgent:
    async def make() -> str:
        handle = unique("codec")
        async with codec_db.session() as session:
            await create_agent(
                session, spec=AgentCreate(handle=handle, name="Codec Test", persona="A tester.")
            )
        return handle

    return make
