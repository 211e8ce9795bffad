"""Recall fixtures: the session's PostgreSQL, one local encoder, agents and records of one's own."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from activities.memory.encoders.local import LocalEncoder
from store.db import Database
from store.embedded import EmbeddedPostgres


@pytest.fixture(scope="session")
async def recall_db(postgres: EmbeddedPostgres) -> AsyncIterator[Database]:
    database = Database(postgres.dsn, pool_size=4)
    yield database
    await database.aclose()


@pytest.fixture(scope="session")
async def minilm() -> AsyncIterator[LocalEncoder]:
    local = LocalEncoder()
    yield local
    await local.aclose()
