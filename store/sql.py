"""Text SQL: the one place the store runs raw statements and builds the literals they take.

Many statements in the store are not ORM queries (search, erasure, deletion, the graph); they
run here, on the session's own connection, so they take part in its transaction. Vectors and
full-text queries travel as bound text parameters, written by the functions below.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Awaitable, Callable, Mapping, Sequence
from enum import Enum
from typing import Any, LiteralString

from psycopg import sql
from psycopg.types.json import Jsonb
from sqlalchemy import JSON, CursorResult, Executable, Table, text
from sqlalchemy.dialects.postgresql import insert
from sqlmodel.ext.asyncio.session import AsyncSession

from store.lane import Lane


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


_COLON_PARAMETER = re.compile(r"(?<![:\w]):([A-Za-z_]\w*)")


@functools.lru_cache(maxsize=256)
def for_driver(statement: str) -> bytes:
    """``statement``, written with ``:name`` placeholders, as the driver lane takes it.

    Placeholders become ``%(name)s`` and a literal ``%`` is doubled. For text shared by a
    session form and a lane form of one query. A ``:word`` inside a string literal would be
    taken for a placeholder: such text is not for this.
    """
    return _COLON_PARAMETER.sub(r"%(\1)s", statement.replace("%", "%%")).encode()


Reader = Callable[[LiteralString, Mapping[str, Any]], Awaitable[Sequence[Mapping[str, Any]]]]
"""Runs one statement, its text in psycopg's ``%(name)s`` form, and returns its rows as
mappings: :meth:`store.lane.Lane.rows` outside any transaction, or :func:`in_session` inside
one. A query written once against a reader serves both."""


def in_session(session: AsyncSession) -> Reader:
    """A reader running the statements on the session's connection, inside its transaction."""

    async def rows(sql: LiteralString, params: Mapping[str, Any]) -> Sequence[Mapping[str, Any]]:
        connection = await session.connection()
        # Straight to the driver: the text has psycopg's placeholders, as the lane takes it.
        result = await connection.exec_driver_sql(sql, dict(params))
        return [dict(row._mapping) for row in result] if result.returns_rows else []

    return rows


async def rowcount(session: AsyncSession, sql: str, params: Mapping[str, Any] | None = None) -> int:
    """Run one write statement like :func:`execute` and return how many rows it touched."""
    return int((await execute(session, sql, params)).rowcount or 0)


@functools.lru_cache(maxsize=64)
def _insert_once(table: Table, key: tuple[str, ...], returning: str | None) -> Executable:
    statement = insert(table).on_conflict_do_nothing(index_elements=list(key))
    return statement.returning(table.c[returning]) if returning is not None else statement


def _plain(values: Mapping[str, Any]) -> dict[str, Any]:
    """``values`` with each enum member as its value."""
    return {
        name: value.value if isinstance(value, Enum) else value for name, value in values.items()
    }


async def insert_once(
    session: AsyncSession,
    table: Table,
    values: Mapping[str, Any],
    *,
    key: Sequence[str],
    returning: str | None = None,
) -> Any:
    """``INSERT ... ON CONFLICT (key) DO NOTHING`` of one row, inside the session's transaction.

    A row written on every message goes through here, not through an ORM insert: one statement
    built once per table and bound to ``values`` costs a fraction of the ORM's bulk-insert
    machinery, which rebuilds and re-keys the statement from the values on every call.

    Returns:
        The ``returning`` column of the row written, or ``None`` when the key existed (or
        nothing was asked back).
    """
    row = _plain(values)
    connection = await session.connection()
    result = await connection.execute(_insert_once(table, tuple(key), returning), row)
    return result.scalar_one_or_none() if returning is not None else None


@functools.lru_cache(maxsize=64)
def _insert_once_text(
    table: str, columns: tuple[str, ...], key: tuple[str, ...], returning: str | None
) -> bytes:
    statement = sql.SQL("INSERT INTO {} ({}) VALUES ({}) ON CONFLICT ({}) DO NOTHING").format(
        sql.Identifier(table),
        sql.SQL(", ").join(map(sql.Identifier, columns)),
        sql.SQL(", ").join(map(sql.Placeholder, columns)),
        sql.SQL(", ").join(map(sql.Identifier, key)),
    )
    if returning is not None:
        statement += sql.SQL(" RETURNING {}").format(sql.Identifier(returning))
    return statement.as_bytes(None)


@functools.lru_cache(maxsize=64)
def _json_columns(table: Table) -> frozenset[str]:
    return frozenset(c.name for c in table.columns if isinstance(c.type, JSON))


async def insert_once_on(
    lane: Lane,
    table: Table,
    values: Mapping[str, Any],
    *,
    key: Sequence[str],
    returning: str | None = None,
) -> Any:
    """:func:`insert_once` on the driver lane: one row, in a statement of its own.

    For the rows every message writes outside any transaction (its prompt, its usage, its
    decision). The statement's text is built once per table and set of columns.

    Returns:
        The ``returning`` column of the row written, or ``None`` when the key existed (or
        nothing was asked back).
    """
    json_columns = _json_columns(table)
    row = {
        name: Jsonb(value) if name in json_columns and value is not None else value
        for name, value in _plain(values).items()
    }
    statement = _insert_once_text(table.name, tuple(row), tuple(key), returning)
    found = await lane.first(statement, row)
    return found[returning] if found is not None and returning is not None else None


def vector_literal(vector: Sequence[float]) -> str:
    """The text form pgvector reads a vector from (bound as a parameter, cast to ``vector``)."""
    return "[" + ",".join(f"{x:.7g}" for x in vector) + "]"


def tsquery_any(lexemes: Sequence[str]) -> str:
    """A tsquery matching any of ``lexemes`` as given, quoted (they are already stemmed)."""
    quoted = ("'" + lex.replace("\\", "\\\\").replace("'", "''") + "'" for lex in lexemes)
    return " | ".join(quoted)
