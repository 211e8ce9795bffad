"""Changing the encoder: dimension checks, reindexing, and migration 0002 both ways.

These run in a database of their own: resizing vector columns must not disturb other tests.
"""

from __future__ import annotations

import hashlib
import json
import math
import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from urllib.parse import quote

import psycopg
import pytest
from alembic import command
from sqlalchemy import text

from activities.memory.encoders.dimensions import (
    DimensionMismatchError,
    check_dimensions,
    stored_dimensions,
)
from activities.memory.encoders.reindex import reindex
from activities.memory.search import DialogSearch
from schemas.agents import AgentCreate
from schemas.memory_search import DialogSearchQuery
from store.db import Database
from store.embedded import EmbeddedPostgres
from store.importer import import_file
from store.migrate import _config, current_revisions, upgrade
from store.queries.agents import create_agent


class TinyEncoder:
    """An 8-dimensional stand-in for "the operator switched models"."""

    name = "tiny-8"
    dimensions = 8

    async def encode(self, texts: list[str]) -> list[list[float]]:
        vectors = []
        for t in texts:
            raw = [b - 127.5 for b in hashlib.sha256(t.encode()).digest()[:8]]
            norm = math.sqrt(sum(x * x for x in raw))
            vectors.append([x / norm for x in raw])
        return vectors

    async def aclose(self) -> None:
        pass


@pytest.fixture
async def own_db(postgres: EmbeddedPostgres) -> AsyncIterator[tuple[str, Database]]:
    name = f"reindex_{uuid.uuid4().hex[:8]}"
    # The session's server asks for its password: the URLs name its password file.
    passfile = quote(str(postgres.password_file), safe="/")
    admin = f"postgresql://postgres@127.0.0.1:{postgres.port}/postgres?passfile={passfile}"
    with psycopg.connect(admin, autocommit=True) as connection:
        connection.execute(f"CREATE DATABASE {name}")
    dsn = f"postgresql+psycopg://postgres@127.0.0.1:{postgres.port}/{name}?passfile={passfile}"
    upgrade(dsn, embedding_dimensions=384)
    database = Database(dsn, pool_size=2)
    try:
        yield dsn, database
    finally:
        await database.aclose()
        with psycopg.connect(admin, autocommit=True) as connection:
            connection.execute(f"DROP DATABASE {name} WITH (FORCE)")


async def test_reindex_moves_every_vector_to_the_new_encoder(
    own_db: tuple[str, Database], tmp_path: Path
) -> None:
    _, db = own_db
    async with db.session() as session:
        await create_agent(session, spec=AgentCreate(handle="ri", name="Ri", persona="Tester."))
    rows = [
        {
            "conversation": "c",
            "channel": {"service": "chat", "channel": "x"},
            "speaker": {"id": "u"},
            "text": f"turn number {i}",
            "at": f"2024-01-0{i + 1}T00:00:00Z",
        }
        for i in range(5)
    ]
    path = tmp_path / "a.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in rows), encoding="utf-8")
    await import_file(db, agent="ri", path=path)
    async with db.engine.begin() as connection:
        await connection.execute(
            text(
                "INSERT INTO memory_records (id, agent, channel_id, summary, importance, "
                "sensitivity, created_at) SELECT '01HV5Z6Z8Q4N1V5X7B2C9E0F1G', 'ri', id, "
                "'I met someone who loves turns.', 5, 'private', now() FROM channels LIMIT 1"
            )
        )
        # A forgotten memory: reindexing must not give it a vector again.
        await connection.execute(
            text(
                "INSERT INTO memory_records (id, agent, channel_id, summary, importance, "
                "sensitivity, created_at, forgotten_at) SELECT '01HV5Z6Z8Q4N1V5X7B2C9E0F1H', "
                "'ri', id, 'Something I was asked to forget.', 5, 'private', now(), now() "
                "FROM channels LIMIT 1"
            )
        )
    assert set((await stored_dimensions(db)).values()) == {384}
    with pytest.raises(DimensionMismatchError, match="run `persyn memory reindex`") as caught:
        await check_dimensions(db, 8)
    assert "\n" not in str(caught.value)

    progress: list[tuple[str, int]] = []
    done = await reindex(db, TinyEncoder(), batch=2, progress=lambda t, n: progress.append((t, n)))
    assert done == {"memory_records": 1, "dialog_turns": 5}
    assert progress[-1] == ("dialog_turns", 5)
    assert set((await stored_dimensions(db)).values()) == {8}
    await check_dimensions(db, 8)
    async with db.engine.connect() as connection:
        models = (
            (
                await connection.execute(
                    text(
                        "SELECT embed_model FROM dialog_turns UNION ALL "
                        "SELECT embed_model FROM memory_records WHERE forgotten_at IS NULL"
                    )
                )
            )
            .scalars()
            .all()
        )
        indexes = (
            (
                await connection.execute(
                    text(
                        "SELECT indexname FROM pg_indexes WHERE indexname IN "
                        "('ix_memory_embedding', 'ix_dialog_turns_embedding')"
                    )
                )
            )
            .scalars()
            .all()
        )
    assert set(models) == {"tiny-8"} and len(models) == 6
    async with db.engine.connect() as connection:
        forgotten = (
            await connection.execute(
                text("SELECT embedding FROM memory_records WHERE forgotten_at IS NOT NULL")
            )
        ).scalar_one()
    assert forgotten is None
    assert sorted(indexes) == ["ix_dialog_turns_embedding", "ix_memory_embedding"]
    hits = await DialogSearch(db, TinyEncoder()).search("ri", "turn number 3")
    assert hits and all(h.semantic is not None for h in hits)
    assert await reindex(db, TinyEncoder()) == {"memory_records": 0, "dialog_turns": 0}


async def test_search_with_mismatched_vectors_stays_lexical(own_db: tuple[str, Database]) -> None:
    _, db = own_db
    async with db.session() as session:
        await create_agent(session, spec=AgentCreate(handle="mm", name="Mm", persona="Tester."))
    result = await DialogSearch(db, TinyEncoder()).run(
        DialogSearchQuery(agent="mm", query="anything")
    )
    assert result.lexical_only and "persyn memory reindex" in (result.notice or "")


def test_migration_0002_downgrades_and_upgrades_again(own_db: tuple[str, Database]) -> None:
    dsn, _ = own_db
    command.downgrade(_config(dsn, 384), "0001")
    with psycopg.connect(dsn.replace("+psycopg", ""), autocommit=True) as connection:
        columns = {
            r[0]
            for r in connection.execute(
                "SELECT column_name FROM information_schema.columns "
                "WHERE table_name = 'dialog_turns'"
            )
        }
    assert "search_tsv" not in columns and "embedding" not in columns
    assert upgrade(dsn, embedding_dimensions=384) == current_revisions(dsn)
    with psycopg.connect(dsn.replace("+psycopg", ""), autocommit=True) as connection:
        restored = connection.execute(
            "SELECT count(*) FROM information_schema.columns "
            "WHERE table_name = 'dialog_turns' AND column_name IN ('search_tsv', 'embedding')"
        ).fetchone()
    assert restored == (2,)
