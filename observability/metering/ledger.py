"""The ledger meter: every usage record into PostgreSQL, exactly once by its ID."""

from __future__ import annotations

from schemas.models import UsageRecord
from store.db import Database
from store.queries.ledger import add_usage


class LedgerMeter:
    """Writes usage records to the ``usage_records`` table."""

    name = "ledger"

    def __init__(self, db: Database) -> None:
        self._db = db

    async def record(self, usage: UsageRecord) -> None:
        """Insert the record (a repeated delivery is ignored)."""
        await add_usage(self._db.lane, usage=usage)

    async def aclose(self) -> None:
        """Nothing to release: the database is shared."""
