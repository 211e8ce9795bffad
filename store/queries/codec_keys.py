"""Data keys of the payload codec: the active key of a scope, keys by ID, shredding."""

from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy import update
from sqlalchemy.dialects.postgresql import insert
from sqlmodel import col, select
from sqlmodel.ext.asyncio.session import AsyncSession

from store.tables.codec_keys import CodecKeyRow
from store.tables.columns import utcnow


async def active_key(session: AsyncSession, *, scope: str) -> CodecKeyRow | None:
    """The scope's key that is not shredded, if there is one."""
    rows = await session.exec(
        select(CodecKeyRow).where(
            CodecKeyRow.scope == scope, col(CodecKeyRow.shredded_at).is_(None)
        )
    )
    return rows.first()


async def add_key(
    session: AsyncSession, *, key_id: str, scope: str, agent: str | None, wrapped_key: bytes
) -> CodecKeyRow:
    """Make ``key_id`` the scope's active key unless another process just made one; commits.

    Returns:
        The scope's active key: this one, or the one that won the race.

    Raises:
        sqlalchemy.exc.IntegrityError: ``agent`` names no agent.
    """
    await session.exec(
        insert(CodecKeyRow)
        .values(id=key_id, scope=scope, agent=agent, wrapped_key=wrapped_key, created_at=utcnow())
        .on_conflict_do_nothing(
            index_elements=["scope"], index_where=col(CodecKeyRow.shredded_at).is_(None)
        )
    )
    await session.commit()
    row = await active_key(session, scope=scope)
    assert row is not None, "an active key exists after the insert"
    return row


async def get_keys(session: AsyncSession, *, key_ids: Sequence[str]) -> list[CodecKeyRow]:
    """The keys of ``key_ids`` that exist, shredded or not (a deleted agent's are gone)."""
    rows = await session.exec(select(CodecKeyRow).where(col(CodecKeyRow.id).in_(key_ids)))
    return list(rows.all())


async def shred_keys(session: AsyncSession, *, agent: str) -> int:
    """Destroy every key of ``agent`` (their rows stay as tombstones); commits.

    Returns:
        How many keys were shredded now (0 if there were none, or all were already).
    """
    result = await session.exec(
        update(CodecKeyRow)
        .where(col(CodecKeyRow.agent) == agent, col(CodecKeyRow.wrapped_key).is_not(None))
        .values(wrapped_key=None, shredded_at=utcnow())
        .returning(CodecKeyRow.__table__.c.id)  # type: ignore[attr-defined]
    )
    count = len(result.all())
    await session.commit()
    return count
