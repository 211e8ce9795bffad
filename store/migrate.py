"""Schema migrations (Alembic), run by ``persyn up`` and by every worker at start.

Migrations run under a PostgreSQL advisory lock, so several workers starting at once apply
each revision exactly once.
"""

from __future__ import annotations

from pathlib import Path

from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import create_engine, pool, text

_LOCK_KEY = 0x5045_5253_594E  # "PERSYN"
_HERE = Path(__file__).parent


def _config(dsn: str, embedding_dimensions: int) -> Config:
    config = Config()
    config.set_main_option("script_location", str(_HERE / "migrations"))
    config.set_main_option("sqlalchemy.url", dsn.replace("%", "%%"))
    config.attributes["embedding_dimensions"] = embedding_dimensions
    return config


def head_revisions() -> tuple[str, ...]:
    """The newest revision of every branch this code knows.

    Independent areas (dialog search, memory, deliberation, autonomy) may branch from the
    same parent; the database is current when it is at every head.
    """
    heads = ScriptDirectory.from_config(_config("postgresql://", 384)).get_heads()
    return tuple(sorted(heads))


def current_revisions(dsn: str) -> tuple[str, ...]:
    """The revisions the database is at (empty before the first migration)."""
    engine = create_engine(dsn, poolclass=pool.NullPool)
    try:
        with engine.connect() as connection:
            return tuple(sorted(MigrationContext.configure(connection).get_current_heads()))
    finally:
        engine.dispose()


def upgrade(dsn: str, *, embedding_dimensions: int = 384) -> tuple[str, ...]:
    """Bring the database to every head revision; returns them.

    Args:
        dsn: SQLAlchemy URL (``postgresql+psycopg://...``).
        embedding_dimensions: Size of vector columns when they are created.
    """
    engine = create_engine(dsn, poolclass=pool.NullPool)
    try:
        with engine.connect() as connection:
            connection.execute(text("SELECT pg_advisory_lock(:k)"), {"k": _LOCK_KEY})
            try:
                current = tuple(sorted(MigrationContext.configure(connection).get_current_heads()))
                if current != head_revisions():
                    command.upgrade(_config(dsn, embedding_dimensions), "heads")
            finally:
                connection.execute(text("SELECT pg_advisory_unlock(:k)"), {"k": _LOCK_KEY})
                connection.commit()
    finally:
        engine.dispose()
    return head_revisions()
