"""Text SQL: the one place the store runs raw statements and builds the literals they take.

Many statements in the store are not ORM queries (search, erasure, deletion, the graph); they
run here, on the session's own connection, so they take part in its transaction. Vectors and
full-text queries travel as bound text parameters, written by the functions below.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from sqlalchemy import CursorResult, text
from sqlmodel.ext.asyncio.session import AsyncSession


async def execute(
    session: AsyncSession, sql: str, params: Mapping[str, Any] | None = None
) -> CursorResult[Any]:
    """Run one statement with bound parameters inside the session's transaction.

    Args:
        session: The session whose connection (and transaction) runs the statement.
        sql: The statement, with ``:name`` placeholders.
        params: Values bound to the placeholders.

    Returns:
        The cursor result (rows of a query, ``rowcount`` of a write).
    """
    connection = await session.connection()
    return await connection.execute(text(sql), dict(params or {}))


async def rowcount(session: AsyncSession, sql: str, params: Mapping[str, Any] | None = None) -> int:
    """Run one write statement like :func:`execute` and return how many rows it touched."""
    return int((await execute(session, sql, params)).rowcount or 0)


def vector_literal(vector: Sequence[float]) -> str:
    """The text form pgvector reads a vector from (bound as a parameter, cast to ``vector``)."""
    return "[" + ",".join(f"{x:.7g}" for x in vector) + "]"


def tsquery_any(lexemes: Sequence[str]) -> str:
    """A tsquery matching any of ``lexemes`` as given, quoted (they are already stemmed)."""
    quoted = ("'" + lex.replace("\\", "\\\\").replace("'", "''") + "'" for lex in lexemes)
    return " | ".join(quoted)
