"""Raw SQL on a session's connection: the search statements are not ORM queries."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from sqlalchemy import CursorResult, text
from sqlmodel.ext.asyncio.session import AsyncSession


async def execute(
    session: AsyncSession, sql: str, params: Mapping[str, Any] | None = None
) -> CursorResult[Any]:
    """Run ``sql`` with bound ``params`` in the session's transaction."""
    connection = await session.connection()
    return await connection.execute(text(sql), dict(params or {}))
