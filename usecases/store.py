"""One way for a client to open the durable store and be sure it is closed again."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from schemas.settings import Settings
from store.db import Database
from store.sql import execute


@asynccontextmanager
async def open_store(settings: Settings, *, pool_size: int = 10) -> AsyncIterator[Database]:
    """The database the settings name, closed when the block ends (even on error).

    Args:
        settings: Where the database is.
        pool_size: Connections to keep; short-lived commands need only a few.

    Yields:
        An open ``Database``; its sessions commit only when the caller says so.
    """
    db = Database(settings.database_dsn(), pool_size=pool_size)
    try:
        yield db
    finally:
        await db.aclose()


async def check_store(settings: Settings) -> None:
    """Reach the database once, to fail early and in one line when it is out of reach.

    Raises:
        sqlalchemy.exc.OperationalError: nothing answers at the configured address.
    """
    async with open_store(settings, pool_size=1) as db, db.session() as session:
        await execute(session, "SELECT 1")
