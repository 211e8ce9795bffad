"""The usage ledger: insert once by record ID."""

from __future__ import annotations

from sqlalchemy.dialects.postgresql import insert
from sqlmodel.ext.asyncio.session import AsyncSession

from schemas.models import UsageRecord
from store.tables import UsageRow


async def add_usage(session: AsyncSession, *, usage: UsageRecord) -> bool:
    """Record ``usage``; returns ``False`` if that record ID was already counted."""
    result = await session.exec(
        insert(UsageRow)
        .values(**usage.model_dump(mode="python"))
        .on_conflict_do_nothing(index_elements=["record_id"])
        .returning(UsageRow.__table__.c.record_id)  # type: ignore[attr-defined]
    )
    await session.commit()
    return result.scalar_one_or_none() is not None
