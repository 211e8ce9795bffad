"""Exact usage totals from the ledger and its daily sums: recorded figures, never re-priced.

Each record is in ``usage_records`` once (its ID is the key), so these sums are exact; the cost
summed is the cost each record carried when it was made. Records past the retention window
live on in ``usage_daily`` (``store.queries.run_retention``): a day's sum is counted when the
day starts inside the report's range, so every total over whole UTC days is unchanged by a
rollup. The sums keep agent, channel, provider, model, stage and tier; grouped by conversation
or activation their records fall under an empty key, and a report filtered by conversation
covers only the records still in the ledger.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import (
    ColumnElement,
    DateTime,
    Integer,
    Select,
    String,
    case,
    cast,
    func,
    literal,
    null,
    select,
    union_all,
)
from sqlmodel.ext.asyncio.session import AsyncSession

from schemas.models import ProviderName
from schemas.usage import UsageGroup, UsageQuery, UsageReport, UsageTotals
from store.tables import UsageDailyRow, UsageRow

LOCAL = ProviderName.LOCAL.value
"""The local model's records: run on this machine, so free, never unpriced."""

_USAGE = UsageRow.__table__  # type: ignore[attr-defined]
_DAILY = UsageDailyRow.__table__  # type: ignore[attr-defined]
_SUMMED = (
    "input_tokens",
    "output_tokens",
    "cached_read_tokens",
    "cached_write_tokens",
    "units",
)


def _rows() -> Any:
    """Ledger records and daily sums as one relation of (dimensions, at, counts, sums)."""
    c, d = _USAGE.c, _DAILY.c
    ledger = select(
        c.stage,
        c.model,
        c.tier,
        c.provider,
        c.channel,
        c.conversation,
        c.agent,
        c.activation,
        c.occurred_at.label("at"),
        literal(1, Integer).label("records"),
        *(c[name] for name in _SUMMED),
        c.cost_usd,
        case((c.provider == LOCAL, 0), (c.cost_usd.is_(None), 1), else_=0).label("unpriced"),
        case((c.provider == LOCAL, 1), else_=0).label("local"),
    )
    daily = select(
        d.stage,
        d.model,
        d.tier,
        d.provider,
        func.nullif(d.channel, "").label("channel"),
        cast(null(), String).label("conversation"),
        d.agent,
        cast(null(), String).label("activation"),
        func.timezone("UTC", cast(d.day, DateTime)).label("at"),
        d.records,
        *(d[name] for name in _SUMMED),
        d.cost_usd,
        case((d.provider == LOCAL, 0), else_=d.unpriced).label("unpriced"),
        case((d.provider == LOCAL, d.records), else_=0).label("local"),
    )
    return union_all(ledger, daily).subquery("usage")


def _totals(rows: Any) -> list[Any]:
    c = rows.c
    return [
        func.coalesce(func.sum(c.records), 0).label("records"),
        *(func.coalesce(func.sum(c[name]), 0).label(name) for name in _SUMMED),
        func.coalesce(func.sum(c.cost_usd), 0.0).label("cost_usd"),
        func.coalesce(func.sum(c.unpriced), 0).label("unpriced"),
        func.coalesce(func.sum(c.local), 0).label("local"),
    ]


def _filters(rows: Any, query: UsageQuery) -> list[ColumnElement[bool]]:
    c = rows.c
    conditions: list[ColumnElement[bool]] = [c.at >= query.since, c.at < query.until]
    for name in ("agent", "channel", "conversation"):
        value = getattr(query, name)
        if value is not None:
            conditions.append(c[name] == value)
    return conditions


def _as_totals(row: Any) -> UsageTotals:
    return UsageTotals(
        records=int(row.records),
        input_tokens=int(row.input_tokens),
        output_tokens=int(row.output_tokens),
        cached_read_tokens=int(row.cached_read_tokens),
        cached_write_tokens=int(row.cached_write_tokens),
        units=int(row.units),
        cost_usd=float(row.cost_usd),
        unpriced=int(row.unpriced),
        local=int(row.local),
    )


async def usage_report(session: AsyncSession, *, query: UsageQuery) -> UsageReport:
    """Totals of the records ``query`` selects, grouped by ``query.by``, with the grand total."""
    connection = await session.connection()
    rows = _rows()
    total_stmt: Select[Any] = select(*_totals(rows)).where(*_filters(rows, query))
    total = _as_totals((await connection.execute(total_stmt)).one())
    groups: list[UsageGroup] = []
    if query.by:
        keys = [rows.c[dimension.value] for dimension in query.by]
        grouped: Select[Any] = (
            select(*keys, *_totals(rows))
            .where(*_filters(rows, query))
            .group_by(*keys)
            .order_by(func.coalesce(func.sum(rows.c.cost_usd), 0.0).desc(), *keys)
        )
        for row in await connection.execute(grouped):
            key = {dimension: row._mapping[dimension.value] for dimension in query.by}
            groups.append(UsageGroup(key=key, totals=_as_totals(row)))
    return UsageReport(query=query, groups=groups, total=total)
