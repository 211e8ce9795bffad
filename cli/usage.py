"""``persyn usage``: exact token and cost totals from the ledger, grouped as asked.

The figures are sums of the usage records as recorded (each once, by its ID), with the cost
each record carried when it was made: nothing is re-priced, so a report never disagrees with
the event log. Records with no price are counted and shown as ``unpriced``; the local model's
are free, and shown so.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from typing import Annotated

import typer

from cli.common import UserError, friendly_errors, run
from schemas.settings import get_settings
from schemas.usage import UsageDimension, UsageQuery, UsageReport, UsageTotals
from usecases.usage import usage_report

_SPAN = re.compile(r"^(\d+(?:\.\d+)?)([mhdw])$")
_UNITS = {"m": "minutes", "h": "hours", "d": "days", "w": "weeks"}


def parse_when(value: str, *, now: datetime) -> datetime:
    """A time given as an age (``30m``, ``24h``, ``7d``, ``2w``) or an ISO date or datetime.

    Raises:
        UserError: Neither form.
    """
    text = value.strip()
    match = _SPAN.match(text)
    if match:
        return now - timedelta(**{_UNITS[match.group(2)]: float(match.group(1))})
    try:
        when = datetime.fromisoformat(text)
    except ValueError:
        raise UserError(
            f"cannot read the time {value!r}: use an age like 24h or 7d, or an ISO date "
            "like 2026-03-01 or 2026-03-01T12:00"
        ) from None
    return when if when.tzinfo is not None else when.replace(tzinfo=UTC)


_COLUMNS = ("records", "input", "output", "cache read", "cache write", "units", "cost USD")


def _cells(totals: UsageTotals) -> list[str]:
    if totals.local and totals.local == totals.records:
        cost = "free (local model)"
    else:
        cost = f"{totals.cost_usd:.6f}"
        if totals.unpriced:
            cost += f" (+{totals.unpriced} unpriced)"
        if totals.local:
            cost += f" (+{totals.local} local, free)"
    return [
        f"{totals.records:,}",
        f"{totals.input_tokens:,}",
        f"{totals.output_tokens:,}",
        f"{totals.cached_read_tokens:,}",
        f"{totals.cached_write_tokens:,}",
        f"{totals.units:,}",
        cost,
    ]


def render(report: UsageReport) -> str:
    """The report as an aligned text table, the grand total last."""
    query = report.query
    by = [dimension.value for dimension in query.by]
    rows = [[*by, *_COLUMNS]]
    for group in report.groups:
        rows.append([str(group.key[d]) for d in query.by] + _cells(group.totals))
    label = ["total"] + [""] * (len(by) - 1) if by else []
    rows.append(label + _cells(report.total))
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    numeric = len(by)
    lines = [
        "  ".join(
            cell.rjust(width) if i >= numeric else cell.ljust(width)
            for i, (cell, width) in enumerate(zip(row, widths, strict=True))
        ).rstrip()
        for row in rows
    ]
    since, until = (f"{t.astimezone(UTC):%Y-%m-%d %H:%M}" for t in (query.since, query.until))
    header = f"usage from {since} to {until} UTC" + (f", by {', '.join(by)}" if by else "")
    return "\n".join([header, *lines])


@friendly_errors
def usage(
    by: Annotated[
        list[UsageDimension] | None,
        typer.Option("--by", help="Group by this (repeatable): stage, model, channel, ..."),
    ] = None,
    since: Annotated[str, typer.Option(help="Start: an age (24h, 7d) or an ISO date.")] = "24h",
    until: Annotated[str | None, typer.Option(help="End (exclusive); default now.")] = None,
    agent: Annotated[str | None, typer.Option(help="Only this agent.")] = None,
    channel: Annotated[str | None, typer.Option(help="Only this channel (service:name).")] = None,
    conversation: Annotated[str | None, typer.Option(help="Only this conversation.")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the report as JSON.")] = False,
) -> None:
    """Exact token and cost totals from the usage ledger."""
    now = datetime.now(UTC)
    query = UsageQuery(
        since=parse_when(since, now=now),
        until=parse_when(until, now=now) if until else now,
        by=list(dict.fromkeys(by or [])),
        agent=agent,
        channel=channel,
        conversation=conversation,
    )
    if query.since >= query.until:
        raise UserError("--since must be before --until")
    report = run(usage_report(settings=get_settings(), query=query))
    typer.echo(report.model_dump_json(indent=2) if as_json else render(report))
