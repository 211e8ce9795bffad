"""Residue items: what recent conversations on a channel left behind (``schemas.residue``)."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import Column, Index, Integer, Text
from sqlmodel import Field, SQLModel

from store.tables.columns import agent_fk, tstz, ulid_col, ulid_pk


class ResidueItemRow(SQLModel, table=True):
    """One item; live while unretired and carried within ``expire_days``."""

    __tablename__ = "residue_items"
    __table_args__ = (Index("ix_residue_items_channel", "agent", "channel_id", "last_carried_at"),)

    id: str = Field(sa_column=ulid_pk())
    agent: str = Field(sa_column=agent_fk())
    channel_id: str = Field(sa_column=ulid_col())
    text: str = Field(sa_column=Column(Text, nullable=False))
    since: datetime = Field(sa_column=tstz())
    last_carried_at: datetime = Field(sa_column=tstz())
    carried: int = Field(default=0, sa_column=Column(Integer, nullable=False))
    conversation_id: str = Field(sa_column=ulid_col())
    run_id: str = Field(sa_column=ulid_col(index=True))
    retired_at: datetime | None = Field(default=None, sa_column=tstz(nullable=True))
