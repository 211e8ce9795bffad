"""Guardrail firings (the operator's inbox of them) and the cooldowns they set (§4.10)."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import (
    Boolean,
    CheckConstraint,
    Column,
    ForeignKey,
    Index,
    String,
    Text,
    UniqueConstraint,
)
from sqlmodel import Field, SQLModel

from store.tables.columns import agent_fk, text_array, tstz, ulid_pk


class GuardrailFiringRow(SQLModel, table=True):
    """One rule firing once for one exchange, with its evidence (turn or tool-call IDs)."""

    __tablename__ = "guardrail_firings"
    __table_args__ = (
        UniqueConstraint("activation_id", "rule_id", name="uq_guardrail_firings_exchange"),
        Index("ix_guardrail_firings_agent_at", "agent", "fired_at"),
    )

    id: str = Field(sa_column=ulid_pk())
    agent: str = Field(sa_column=agent_fk())
    rule_id: str = Field(sa_column=Column(String(64), nullable=False))
    actions: list[str] = Field(default_factory=list, sa_column=text_array())
    evidence: list[str] = Field(default_factory=list, sa_column=text_array())
    summary: str = Field(sa_column=Column(Text, nullable=False))
    person_id: str | None = Field(default=None, sa_column=Column(String(26), nullable=True))
    channel_key: str | None = Field(default=None, sa_column=Column(Text, nullable=True))
    conversation_id: str | None = Field(default=None, sa_column=Column(String(26), nullable=True))
    activation_id: str | None = Field(default=None, sa_column=Column(String(26), nullable=True))
    blocking: bool = Field(default=False, sa_column=Column(Boolean, nullable=False))
    fired_at: datetime = Field(sa_column=tstz())
    notified_at: datetime | None = Field(default=None, sa_column=tstz(nullable=True))


class GuardrailCooldownRow(SQLModel, table=True):
    """The agent stays silent towards a person, or on a channel, until ``until``."""

    __tablename__ = "guardrail_cooldowns"
    __table_args__ = (
        CheckConstraint("scope IN ('person', 'channel')", name="ck_guardrail_cooldowns_scope"),
    )

    agent: str = Field(
        sa_column=Column(
            String(32), ForeignKey("agents.handle", ondelete="CASCADE"), primary_key=True
        )
    )
    scope: str = Field(sa_column=Column(String(16), primary_key=True))
    key: str = Field(sa_column=Column(Text, primary_key=True))
    until: datetime = Field(sa_column=tstz())
    rule_id: str = Field(sa_column=Column(String(64), nullable=False))
    firing_id: str | None = Field(default=None, sa_column=Column(String(26), nullable=True))
