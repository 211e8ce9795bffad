"""Tool approvals: a call waiting for a yes, and what was decided (``schemas.approvals``)."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import Column, Index, String, Text
from sqlmodel import Field, SQLModel

from store.tables.columns import agent_fk, tstz, ulid_col, ulid_pk


class ApprovalRow(SQLModel, table=True):
    """One approval: pending until decided, refused by default at its deadline."""

    __tablename__ = "tool_approvals"
    __table_args__ = (Index("ix_tool_approvals_agent_status", "agent", "status", "created_at"),)

    id: str = Field(sa_column=ulid_pk())
    agent: str = Field(sa_column=agent_fk())
    activation_id: str = Field(sa_column=ulid_col())
    call_id: str = Field(sa_column=ulid_col(index=True))
    tool: str = Field(sa_column=Column(Text, nullable=False))
    arguments: str = Field(sa_column=Column(Text, nullable=False))
    reason: str = Field(sa_column=Column(Text, nullable=False))
    asked_by: str = Field(sa_column=Column(Text, nullable=False))
    channel: str = Field(sa_column=Column(Text, nullable=False))
    created_at: datetime = Field(sa_column=tstz())
    deadline: datetime = Field(sa_column=tstz())
    status: str = Field(sa_column=Column(String(16), nullable=False))
    decided_by: str | None = Field(default=None, sa_column=Column(Text, nullable=True))
    decided_at: datetime | None = Field(default=None, sa_column=tstz(nullable=True))
    why: str | None = Field(default=None, sa_column=Column(Text, nullable=True))
