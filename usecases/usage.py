"""The usage ledger from a client: exact token and cost totals, grouped as asked."""

from __future__ import annotations

from schemas.settings import Settings
from schemas.usage import UsageQuery, UsageReport
from store.queries.usage_report import usage_report as ledger_report
from usecases.store import open_store


async def usage_report(*, settings: Settings, query: UsageQuery) -> UsageReport:
    """Sums of the usage records as recorded, with the cost each carried when it was made.

    Nothing is re-priced, so a report never disagrees with the event log.
    """
    async with open_store(settings, pool_size=2) as db, db.session() as session:
        return await ledger_report(session, query=query)
