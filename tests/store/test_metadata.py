"""The SQLModel tables describe the migrated database: no column or table drifts apart."""

from __future__ import annotations

from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from sqlalchemy import create_engine, pool
from sqlmodel import SQLModel

import store.tables  # noqa: F401  (registers every table)
from store.embedded import EmbeddedPostgres


def _differences(dsn: str) -> list[object]:
    engine = create_engine(dsn, poolclass=pool.NullPool)
    try:
        with engine.connect() as connection:
            context = MigrationContext.configure(
                connection, opts={"compare_type": False, "compare_server_default": False}
            )
            diffs = compare_metadata(context, SQLModel.metadata)
    finally:
        engine.dispose()
    # Indexes are declared where queries need them (HNSW, GIN, partial); tables and columns
    # are what the ORM must agree on.
    return [
        d
        for d in diffs
        if isinstance(d, tuple)
        and d[0] in {"add_table", "remove_table", "add_column", "remove_column"}
    ]


def test_tables_and_columns_match_the_migrations(postgres: EmbeddedPostgres) -> None:
    diffs = _differences(postgres.dsn)
    assert diffs == [], "\n".join(str(d)[:200] for d in diffs)
