"""Database engines: one async engine per process for activities, sync ones for tools."""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from typing import Any

from sqlalchemy import CursorResult, create_engine, text
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


async def execute_sql(
    session: AsyncSession, sql: str, params: Mapping[str, Any] | None = None
) -> CursorResult[Any]:
    """Run one SQL statement on the session's connection (inside its transaction)."""
    connection = await session.connection()
    return await connection.execute(text(sql), dict(params or {}))


def sync_engine(dsn: str) -> Engine:
    """A synchronous engine (CLI read views, migrations, benchmarks)."""
    return create_engine(dsn, pool_pre_ping=True)
