"""The usage ledger: insert once by record ID."""

from __future__ import annotations

from schemas.models import UsageRecord
from store.lane import Lane
from store.sql import insert_once_on
from store.tables import UsageRow


async def add_usage(lane: Lane, *, usage: UsageRecord) -> bool:
    """Record ``usage``; returns ``False`` if that record ID was already counted.

    On the driver lane: every model call writes one.
    """
    stored = await insert_once_on(
        lane,
        UsageRow.__table__,  # type: ignore[attr-defined]
        usage.model_dump(mode="python"),
        key=["record_id"],
        returning="record_id",
    )
    return stored is not None
