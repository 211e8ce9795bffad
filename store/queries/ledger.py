"""The usage ledger: insert once by record ID."""

from __future__ import annotations

from sqlmodel.ext.asyncio.session import AsyncSession

from schemas.models import UsageRecord
from store.sql import insert_once
from store.tables import UsageRow


async def add_usage(session: AsyncSession, *, usage: UsageRecord) -> bool:
    """Record ``usage``; returns ``False`` if that record ID was already counted."""
    stored = await insert_once(
        session,
        UsageRow.__table__,  # type: ignore[attr-defined]
        usage.model_dump(mode="python"),
        key=["record_id"],
        returning="record_id",
    )
    await session.commit()
    return stored is not None
