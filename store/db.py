"""Database engines: one async engine per process for activities, sync ones for tools."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from sqlalchemy import create_engine
from sqlalchemy.engine import Engine
from sqlalchemy.ext.asyncio import AsyncEngine, async_sessionmaker, create_async_engine
from sqlmodel.ext.asyncio.session import AsyncSession


class Database:
    """An async engine and its session factory."""

    def __init__(self, dsn: str, *, pool_size: int = 10) -> None:
        self.dsn = dsn
        # No pre-ping: it would cost a round trip per checkout on the hot path. A connection
        # that died with a database restart fails its statement, SQLAlchemy discards the
        # pool, and the activity's retry gets a fresh connection.
        self.engine: AsyncEngine = create_async_engine(
            dsn,
            pool_size=pool_size,
            max_overflow=pool_size,
            pool_pre_ping=False,
            pool_recycle=1800,
        )
        self._sessions = async_sessionmaker(
            self.engine, class_=AsyncSession, expire_on_commit=False
        )

    @asynccontextmanager
    async def session(self) -> AsyncIterator[AsyncSession]:
        """A session; the caller commits."""
        async with self._sessions() as session:
            yield session

    async def aclose(self) -> None:
        """Close every pooled connection."""
        await self.engine.dispose()


def sync_engine(dsn: str) -> Engine:
    """A synchronous engine (CLI read views, migrations, benchmarks)."""
    return create_engine(dsn, pool_pre_ping=True)
