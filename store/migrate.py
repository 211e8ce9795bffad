"""Schema migrations (Alembic), run by ``persyn up`` and by every worker at start.

Migrations run under a PostgreSQL advisory lock, so several workers starting at once apply
each revision exactly once. The revisions form one chain with one head: the areas that once
branched from a common parent are joined by a merge revision (``0012_web_tenants``), and every
revision after it revises the one before (``docs/operations.md``, "Schema migrations").
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


class SeveralHeadsError(RuntimeError):
    """The migration scripts end in more than one head: a new revision did not revise the head."""


def head_revision() -> str:
    """The newest revision this code knows, the one head of the chain.

    Raises:
        SeveralHeadsError: Two revisions revise the same parent; the newer one must revise
            the head instead.
    """
    heads = ScriptDirectory.from_config(_config("postgresql://", 384)).get_heads()
    if len(heads) != 1:
        raise SeveralHeadsError(
            f"the migrations have {len(heads)} heads ({', '.join(sorted(heads))}); "
            "make the newest revision's down_revision the head"
        )
    return heads[0]


def current_revisions(dsn: str) -> tuple[str, ...]:
    """The revisions the database is at (empty before the first migration)."""
    engine = create_engine(dsn, poolclass=pool.NullPool)
    try:
        with engine.connect() as connection:
            return tuple(sorted(MigrationContext.configure(connection).get_current_heads()))
    finally:
        engine.dispose()


def upgrade(dsn: str, *, embedding_dimensions: int = 384) -> tuple[str, ...]:
    """Bring the database to the head revision; returns the revisions it is then at.

    A database last migrated before the branches were merged is at several revisions (one per
    branch); upgrading it applies what each branch still lacks, then the merge, then the chain,
    and it ends at the one head like any other.

    Args:
        dsn: SQLAlchemy URL (``postgresql+psycopg://...``).
        embedding_dimensions: Size of vector columns when they are created.

    Returns:
        ``(head,)``, the one revision the database is at afterwards.
    """
    head = head_revision()
    engine = create_engine(dsn, poolclass=pool.NullPool)
    try:
        with engine.connect() as connection:
            connection.execute(text("SELECT pg_advisory_lock(:k)"), {"k": _LOCK_KEY})
            try:
                current = MigrationContext.configure(connection).get_current_heads()
                if tuple(current) != (head,):
                    command.upgrade(_config(dsn, embedding_dimensions), head)
            finally:
                connection.execute(text("SELECT pg_advisory_unlock(:k)"), {"k": _LOCK_KEY})
                connection.commit()
    finally:
        engine.dispose()
    return (head,)
