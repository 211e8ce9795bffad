"""Memory-test fixtures: the session's embedded PostgreSQL and agents of one's own.

The one local encoder is the session's (``encoder`` in tests/conftest.py).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable

import pytest

from schemas.agents import AgentCreate
from store.db import Database
from store.embedded import EmbeddedPostgres
from store.queries.agents import create_agent
from tests.harness import unique


@pytest.fixture(scope="session")
async def db(postgres: EmbeddedPostgres) -> AsyncIterator[Database]:
    database = Database(postgres.dsn, pool_size=4)
    yield database
    await database.aclose()


NewAgent = Callable[[], Awaitable[str]]


@pytest.fixture
def new_agent(db: Database) -> NewAgent:
    async def make() -> str:
        handle = unique("mem")
        async with db.session() as session:
            await create_agent(
                session, spec=AgentCreate(handle=handle, name="Memory Test", persona="A tester.")
            )
        return handle

    return make
