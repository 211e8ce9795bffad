"""The usage ledger: one row per billable unit of work, and daily sums of the old ones.

A record is counted once by its ID; past the retention window it lives on in its day's sum.
"""

from __future__ import annotations

from datetime import date, datetime

from sqlalchemy import BigInteger, Date, Float, Index, String
from sqlmodel import Column, Field, SQLModel

from store.tables.columns import tstz


class UsageRow(SQLModel, table=True):
    """A usage record (Appendix C). ``record_id`` is the stable key that de-duplicates delivery."""

    __tablename__ = "usage_records"
    __table_args__ = (
        Index("ix_usage_agent_at", "agent", "occurred_at"),
        Index("ix_usage_conversation", "conversation"),
        Index("ix_usage_activation", "activation"),
    )

    record_id: str = Field(sa_column=Column(String(40), primary_key=True))
    stage: str
    provider: str
    model: str
    tier: str
    input_tokens: int = 0
    output_tokens: int = 0
    cached_read_tokens: int = 0
    cached_write_tokens: int = 0
    units: int = 0
    cost_usd: float | None = Field(default=None, sa_column=Column(Float, nullable=True))
    agent: str | None = None
    channel: str | None = None
    conversation: str | None = None
    activation: str | None = None
    occurred_at: datetime = Field(sa_column=tstz())
    latency_ms: float = 0.0


class UsageDailyRow(SQLModel, table=True):
    """Ledger rows past the retention window, summed per agent, day, channel and model.

    Retention rolls old ``usage_records`` up into these rows before deleting them, so every
    total over whole days stays exact; only the per-conversation and per-activation detail of
    those days is given up (docs/operations.md).
    """

    __tablename__ = "usage_daily"

    agent: str = Field(sa_column=Column(String(32), primary_key=True))
    day: date = Field(sa_column=Column(Date, primary_key=True))
    channel: str = Field(sa_column=Column(String, primary_key=True))
    """The records' channel, ``''`` for records that had none."""
    provider: str = Field(sa_column=Column(String, primary_key=True))
    model: str = Field(sa_column=Column(String, primary_key=True))
    stage: str = Field(sa_column=Column(String, primary_key=True))
    tier: str = Field(sa_column=Column(String, primary_key=True))
    records: int = Field(sa_column=Column(BigInteger, nullable=False))
    input_tokens: int = Field(sa_column=Column(BigInteger, nullable=False))
    output_tokens: int = Field(sa_column=Column(BigInteger, nullable=False))
    cached_read_tokens: int = Field(sa_column=Column(BigInteger, nullable=False))
    cached_write_tokens: int = Field(sa_column=Column(BigInteger, nullable=False))
    units: int = Field(sa_column=Column(BigInteger, nullable=False))
    cost_usd: float = Field(sa_column=Column(Float, nullable=False))
    """Summed over the priced records only."""
    unpriced: int = Field(sa_column=Column(BigInteger, nullable=False))
