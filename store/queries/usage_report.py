"""Exact usage totals from the ledger: sums of recorded records, never re-priced.

Each record is in ``usage_records`` once (its ID is the key), so these sums are exact; the cost
summed is the cost each record carried when it was made.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import ColumnElement, Select, func, select
from sqlmodel.ext.asyncio.session import AsyncSession

from schemas.usage import UsageGroup, UsageQuery, UsageReport, UsageTotals
from store.tables import UsageRow

_USAGE = UsageRow.__table__  # type: ignore[attr-defined]


def _totals() -> list[Any]:
    c = _USAGE.c
    return [
        func.count().label("records"),
        func.coalesce(func.sum(c.input_tokens), 0).label("input_tokens"),
        func.coalesce(func.sum(c.output_tokens), 0).label("output_tokens"),
        func.coalesce(func.sum(c.cached_read_tokens), 0).label("cached_read_tokens"),
        func.coalesce(func.sum(c.cached_write_tokens), 0).label("cached_write_tokens"),
        func.coalesce(func.sum(c.units), 0).label("units"),
        func.coalesce(func.sum(c.cost_usd), 0.0).label("cost_usd"),
        func.count().filter(c.cost_usd.is_(None)).label("unpriced"),
    ]


def _filters(query: UsageQuery) -> list[ColumnElement[bool]]:
    c = _USAGE.c
    conditions: list[ColumnElement[bool]] = [
        c.occurred_at >= query.since,
        c.occurred_at < query.until,
    ]
    for name in ("agent", "channel", "conversation"):
        value = getattr(query, name)
        if value is not None:
            conditions.append(c[name] == value)
    return conditions


def _as_totals(row: Any) -> UsageTotals:
    return UsageTotals(
        records=row.records,
        input_tokens=row.input_tokens,
        output_tokens=row.output_tokens,
        cached_read_tokens=row.cached_read_tokens,
        cached_write_tokens=row.cached_write_tokens,
        units=row.units,
        cost_usd=float(row.cost_usd),
        unpriced=row.unpriced,
    )


async def usage_report(session: AsyncSession, *, query: UsageQuery) -> UsageReport:
    """Totals of the records ``query`` selects, grouped by ``query.by``, with the grand total."""
    connection = await session.connection()
    total_stmt: Select[Any] = select(*_totals()).where(*_filters(query))
    total = _as_totals((await connection.execute(total_stmt)).one())
    groups: list[UsageGroup] = []
    if query.by:
        keys = [_USAGE.c[dimension.value] for dimension in query.by]
        grouped: Select[Any] = (
            select(*keys, *_totals())
            .where(*_filters(query))
            .group_by(*keys)
            .order_by(func.coalesce(func.sum(_USAGE.c.cost_usd), 0.0).desc(), *keys)
        )
        for row in await connection.execute(grouped):
            key = {dimension: row._mapping[dimension.value] for dimension in query.by}
            groups.append(UsageGroup(key=key, totals=_as_totals(row)))
    return UsageReport(query=query, groups=groups, total=total)
