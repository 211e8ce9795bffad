"""Usage reports: exact totals from the ledger, grouped by the dimensions an operator asks for."""

from __future__ import annotations

from enum import StrEnum

from pydantic import AwareDatetime, Field

from schemas.events import Wire


class UsageDimension(StrEnum):
    """A column of the ledger a report can group by."""

    STAGE = "stage"
    MODEL = "model"
    TIER = "tier"
    PROVIDER = "provider"
    CHANNEL = "channel"
    CONVERSATION = "conversation"
    AGENT = "agent"
    ACTIVATION = "activation"


class UsageQuery(Wire):
    """Which records a report covers (``since`` inclusive, ``until`` exclusive) and how."""

    since: AwareDatetime
    until: AwareDatetime
    by: list[UsageDimension] = Field(default_factory=list)
    agent: str | None = None
    channel: str | None = None
    conversation: str | None = None


class UsageTotals(Wire):
    """Sums over a set of usage records; ``cost_usd`` covers only the priced ones."""

    records: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cached_read_tokens: int = 0
    cached_write_tokens: int = 0
    units: int = 0
    cost_usd: float = 0.0
    unpriced: int = Field(
        default=0, description="Records counted with no cost (no price), the local model's aside."
    )
    local: int = Field(
        default=0, description="Records of the local model: run on this machine, free of charge."
    )


class UsageGroup(Wire):
    """The totals of one combination of the grouping dimensions."""

    key: dict[UsageDimension, str | None]
    totals: UsageTotals


class UsageReport(Wire):
    """A report: its query, one group per combination (costliest first) and the grand total."""

    query: UsageQuery
    groups: list[UsageGroup] = Field(default_factory=list)
    total: UsageTotals = Field(default_factory=UsageTotals)
