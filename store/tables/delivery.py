"""Pacing overrides: an agent's own budgets and intervals for its channels (docs/channels.md)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import ForeignKey, String
from sqlmodel import Column, Field, SQLModel

from store.tables.columns import jsonb, tstz

EVERY_CHANNEL = "*"
"""``channel_key`` of an override that applies to all of an agent's channels."""


class PacingOverrideRow(SQLModel, table=True):
    """Pacing settings overriding the defaults for one agent (and one channel, or every one)."""

    __tablename__ = "pacing_overrides"

    agent: str = Field(
        sa_column=Column(
            String(32),
            ForeignKey("agents.handle", ondelete="CASCADE"),
            primary_key=True,
        )
    )
    channel_key: str = Field(sa_column=Column(String(300), primary_key=True))
    settings: dict[str, Any] = Field(default_factory=dict, sa_column=jsonb())
    updated_at: datetime = Field(sa_column=tstz())
