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


def head_revision() -> str:
    """The newest revision this code knows."""
    head = ScriptDirectory.from_config(_config("postgresql://", 384)).get_current_head()
    assert head is not None
    return head


def current_revision(dsn: str) -> str | None:
    """The revision the database is at, or ``None`` before the first migration."""
    engine = create_engine(dsn, poolclass=pool.NullPool)
    try:
        with engine.connect() as connection:
            return MigrationContext.configure(connection).get_current_revision()
    finally:
        engine.dispose()


def upgrade(dsn: str, *, embedding_dimensions: int = 384) -> str:
    """Bring the database to the newest revision; returns it.

    Args:
        dsn: SQLAlchemy URL (``postgresql+psycopg://...``).
        embedding_dimensions: Size of the memory vector column when it is created.
    """
    engine = create_engine(dsn, poolclass=pool.NullPool)
    try:
        with engine.connect() as connection:
            connection.execute(text("SELECT pg_advisory_lock(:k)"), {"k": _LOCK_KEY})
            try:
                if MigrationContext.configure(connection).get_current_revision() != head_revision():
                    command.upgrade(_config(dsn, embedding_dimensions), "head")
            finally:
                connection.execute(text("SELECT pg_advisory_unlock(:k)"), {"k": _LOCK_KEY})
                connection.commit()
    finally:
        engine.dispose()
    return head_revision()
