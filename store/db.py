"""Database engines: one async engine per process for activities, sync ones for tools."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from sqlalchemy import create_engine
from sqlalchemy.engine import Engine
from sqlalchemy.ext.asyncio import AsyncEngine, async_sessionmaker, create_async_engine
from sqlmodel.ext.asyncio.session import AsyncSession

from store.lane import Lane

LANE_SIZE = 8
"""The driver lane's connections at most: its statements are short, and a message's concurrent
context reads number about fifteen."""


class Database:
    """An async engine and its session factory, and the driver lane beside them."""

    def __init__(self, dsn: str, *, pool_size: int = 10) -> None:
        self.dsn = dsn
        # Pre-ping: the message path's statements run on the lane, so the engine's pooled
        # connections can sit idle through a database restart, and the next session would
        # meet a dead one, in an activity (a retry) or outside one (a CLI command, a web
        # request: an error). One round trip per checkout, on the paths that are left.
        self.engine: AsyncEngine = create_async_engine(
            dsn,
            pool_size=pool_size,
            max_overflow=pool_size,
            pool_pre_ping=True,
            pool_recycle=1800,
        )
        self._sessions = async_sessionmaker(
            self.engine, class_=AsyncSession, expire_on_commit=False
        )
        # The same pool in autocommit: no BEGIN and ROLLBACK/COMMIT round trips (see autocommit).
        self._autocommit = async_sessionmaker(
            self.engine.execution_options(isolation_level="AUTOCOMMIT"),
            class_=AsyncSession,
            expire_on_commit=False,
        )
        self.lane = Lane(dsn, size=min(pool_size, LANE_SIZE))
        """Single statements on psycopg itself, for the hot path (:mod:`store.lane`)."""

    @asynccontextmanager
    async def session(self) -> AsyncIterator[AsyncSession]:
        """A session; the caller commits."""
        async with self._sessions() as session:
            yield session

    @asynccontextmanager
    async def autocommit(self) -> AsyncIterator[AsyncSession]:
        """A session in autocommit: each statement commits as it runs.

        For reads and single-statement writes on hot paths: they save the transaction's
        ``BEGIN`` and ``ROLLBACK``/``COMMIT`` round trips. Under PostgreSQL's default READ
        COMMITTED every statement takes its own snapshot even inside a transaction, so a read
        sees exactly what it would in :meth:`session`, and one statement is atomic on its own.
        Not for several writes that must land together, ``SET LOCAL`` or anything else that
        needs a transaction.
        """
        async with self._autocommit() as session:
            yield session

    async def aclose(self) -> None:
        """Close every pooled connection, the lane's too."""
        await self.lane.close()
        await self.engine.dispose()


def sync_engine(dsn: str) -> Engine:
    """A synchronous engine (CLI read views, migrations, benchmarks)."""
    return create_engine(dsn, pool_pre_ping=True)
