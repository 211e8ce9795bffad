"""The driver lane: the message path's hot single statements, straight on psycopg.

A statement through SQLAlchemy's session costs the worker about 0.4 ms of CPU (the session, the
pool checkout, the greenlet bridge, compilation and result processing) against well under
0.1 ms on psycopg alone, and a message sends about fifty (``bench/statement_cost.py``). The
lane is a small psycopg pool of autocommit connections beside the engine's, for the reads and
single-statement writes every message repeats. Its statements are SQL text with psycopg's
``%(name)s`` placeholders; psycopg prepares each one server-side after a few runs, which saves
PostgreSQL the parse and the plan as well.

Nothing that needs a transaction runs here, but for one statement with settings of its own
(:meth:`Lane.rows_with`): several writes that must land together stay on
:meth:`store.db.Database.session`. Under READ COMMITTED a single statement sees exactly what it
would inside a transaction, so a read moved to the lane reads the same rows.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping
from typing import Any, LiteralString

import psycopg
from psycopg import sql
from psycopg.rows import dict_row
from psycopg_pool import AsyncConnectionPool

log = logging.getLogger(__name__)

CHECKOUT_TIMEOUT_S = 10.0
"""Longest wait for a connection. The pool waits while the database is down (it reconnects in
the background); past this the statement fails like any other and its activity retries."""

APPLICATION_NAME = "persyn-lane"
"""The lane's connections' ``application_name``."""

Row = dict[str, Any]

Statement = LiteralString | bytes | sql.SQL | sql.Composed
"""What the lane runs: literal SQL text, or text composed once with psycopg's ``sql``."""


def driver_dsn(dsn: str) -> str:
    """``dsn`` as psycopg takes it: without SQLAlchemy's ``+psycopg`` driver suffix."""
    return dsn.replace("postgresql+psycopg://", "postgresql://", 1)


class Lane:
    """A lazily opened pool of autocommit psycopg connections, rows returned as dicts.

    Args:
        dsn: The database, in SQLAlchemy's or psycopg's form.
        size: Connections at most. The pool opens at the first statement, in that event loop.
    """

    def __init__(self, dsn: str, *, size: int) -> None:
        self._dsn = driver_dsn(dsn)
        self._size = max(1, size)
        self._pool: AsyncConnectionPool[psycopg.AsyncConnection[Row]] | None = None
        self._opening: asyncio.Lock | None = None

    async def rows(
        self, statement: Statement, params: Mapping[str, Any] | None = None
    ) -> list[Row]:
        """The rows ``statement`` returns (none for one that returns none)."""
        pool = await self._open()
        try:
            async with pool.connection() as connection:
                cursor = await connection.execute(statement, params)
                return await cursor.fetchall() if cursor.description is not None else []
        except psycopg.OperationalError:
            # A restarted database leaves every pooled connection dead: drop them all now,
            # so the activity's retry does not meet them one by one.
            await pool.check()
            raise

    async def rows_with(
        self,
        settings: Mapping[str, str],
        statement: Statement,
        params: Mapping[str, Any] | None = None,
    ) -> list[Row]:
        """The rows ``statement`` returns, in a transaction of its own with ``settings``.

        The settings hold for this statement alone (``SET LOCAL``: the index options a search
        wants, for instance).
        """
        pool = await self._open()
        setup = sql.SQL("SELECT {}").format(
            sql.SQL(", ").join(sql.SQL("set_config(%s, %s, true)") for _ in settings)
        )
        values = [each for pair in settings.items() for each in pair]
        try:
            async with pool.connection() as connection, connection.transaction():
                if settings:
                    await connection.execute(setup, values)
                cursor = await connection.execute(statement, params)
                return await cursor.fetchall() if cursor.description is not None else []
        except psycopg.OperationalError:
            await pool.check()  # as in rows()
            raise

    async def first(
        self, statement: Statement, params: Mapping[str, Any] | None = None
    ) -> Row | None:
        """The first row ``statement`` returns, or ``None``."""
        found = await self.rows(statement, params)
        return found[0] if found else None

    async def _open(self) -> AsyncConnectionPool[psycopg.AsyncConnection[Row]]:
        if self._pool is not None:
            return self._pool
        if self._opening is None:
            self._opening = asyncio.Lock()
        async with self._opening:
            if self._pool is None:
                pool: AsyncConnectionPool[psycopg.AsyncConnection[Row]] = AsyncConnectionPool(
                    self._dsn,
                    connection_class=psycopg.AsyncConnection[Row],
                    kwargs={
                        "autocommit": True,
                        "row_factory": dict_row,
                        # Told apart from the engine's connections in pg_stat_activity.
                        "application_name": APPLICATION_NAME,
                    },
                    min_size=1,
                    max_size=self._size,
                    timeout=CHECKOUT_TIMEOUT_S,
                    open=False,
                    name=APPLICATION_NAME,
                )
                await pool.open()
                self._pool = pool
        return self._pool

    async def close(self) -> None:
        """Close every connection; the next statement opens the pool again."""
        pool, self._pool = self._pool, None
        if pool is not None:
            await pool.close()
