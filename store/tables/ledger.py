"""The usage ledger: one row per completed billable unit of work, counted once by its ID."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import Float, Index, String
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
