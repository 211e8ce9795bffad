"""The client's CPU for one small statement, by the way the store reaches PostgreSQL.

A message sends the database about fifty statements (admission 25, the rest in the steps after
the model and the background work), most of them small reads. The database's own work for each is
a fraction of a millisecond; what the worker pays is the client's: SQLAlchemy's session, pool
checkout, greenlet bridge and result processing around psycopg. This benchmark runs the same
one-row ``SELECT`` with bound parameters through each layer the store could use, against one
embedded PostgreSQL, and reads the process's CPU time per statement:

* ``session, autocommit``: ``Database.autocommit()`` (how the message path reads today);
* ``session, transaction``: ``Database.session()`` (``BEGIN``/``ROLLBACK`` around it);
* ``engine connection``: SQLAlchemy Core on a pooled connection, no ORM session;
* ``lane``: the store's driver lane, a psycopg pool of autocommit connections
  (``store.lane``), rows as dicts;
* ``psycopg``: the driver's own async connection, no SQLAlchemy.

Usage: ``python -m bench.statement_cost [--statements 2000] [--blocks 3]``
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time
from collections.abc import Awaitable, Callable

import psycopg
from sqlalchemy import text

from bench.harness import private_postgres, record
from store.db import Database

QUERY = "SELECT 1 AS x WHERE CAST(:a AS int) = CAST(:a AS int)"
"""One row, one bound parameter: the shape of the path's small reads, with no table work."""

DRIVER_QUERY = QUERY.replace(":a", "%(a)s")
"""The same statement in psycopg's placeholders."""


def _layers(db: Database, raw: psycopg.AsyncConnection) -> dict[str, Callable[[], Awaitable[None]]]:
    engine = db.engine.execution_options(isolation_level="AUTOCOMMIT")
    statement = text(QUERY)

    async def session_autocommit() -> None:
        async with db.autocommit() as session:
            connection = await session.connection()
            (await connection.execute(statement, {"a": 1})).all()

    async def session_transaction() -> None:
        async with db.session() as session:
            connection = await session.connection()
            (await connection.execute(statement, {"a": 1})).all()

    async def engine_connection() -> None:
        async with engine.connect() as connection:
            (await connection.execute(statement, {"a": 1})).all()

    async def lane() -> None:
        await db.lane.rows(DRIVER_QUERY, {"a": 1})

    async def driver() -> None:
        cursor = await raw.execute(DRIVER_QUERY, {"a": 1})
        await cursor.fetchall()

    return {
        "session, autocommit": session_autocommit,
        "session, transaction": session_transaction,
        "engine connection": engine_connection,
        "lane": lane,
        "psycopg": driver,
    }


async def _cpu_ms(call: Callable[[], Awaitable[None]], statements: int) -> float:
    """CPU milliseconds per statement over ``statements`` runs, after a warm-up."""
    for _ in range(200):
        await call()
    began = time.process_time()
    for _ in range(statements):
        await call()
    return (time.process_time() - began) * 1000 / statements


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--statements", type=int, default=2000)
    parser.add_argument("--blocks", type=int, default=3)
    args = parser.parse_args()
    with private_postgres("persyn-statements-") as pg:
        db = Database(pg.dsn)
        raw = await psycopg.AsyncConnection.connect(
            pg.dsn.replace("postgresql+psycopg", "postgresql", 1), autocommit=True
        )
        layers = _layers(db, raw)
        blocks: dict[str, list[float]] = {name: [] for name in layers}
        for _ in range(args.blocks):  # interleaved, so drift spreads over every layer
            for name, call in layers.items():
                blocks[name].append(await _cpu_ms(call, args.statements))
        await raw.close()
        await db.aclose()
    floor = statistics.median(blocks["psycopg"])
    rows = [
        "| layer | CPU ms per statement (median of blocks) | blocks | against psycopg |",
        "|---|---|---|---|",
    ]
    for name, values in blocks.items():
        median = statistics.median(values)
        spread = ", ".join(f"{v:.3f}" for v in values)
        rows.append(f"| {name} | {median:.3f} | {spread} | {median / floor:.1f}x |")
    record(
        "The client's CPU per statement, by layer",
        f"Command: `python -m bench.statement_cost --statements {args.statements} "
        f"--blocks {args.blocks}`\n\n"
        f"`{QUERY}` awaited {args.statements} times per block after 200 warm-up, layers "
        "interleaved, one embedded PostgreSQL, process CPU time.\n\n" + "\n".join(rows),
    )


if __name__ == "__main__":
    asyncio.run(main())
