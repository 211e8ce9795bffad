"""Run-time records: stored prompts, reply drafts, activations, completion markers, the outbox."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import Index, Integer, String, Text
from sqlalchemy.dialects.postgresql import JSONB
from sqlmodel import Column, Field, SQLModel

from store.tables.columns import tstz, ulid_col, ulid_pk


class PromptRow(SQLModel, table=True):
    """An assembled prompt; workflow history carries only its ID."""

    __tablename__ = "prompts"

    id: str = Field(sa_column=ulid_pk())
    activation_id: str | None = Field(default=None, sa_column=ulid_col(nullable=True, index=True))
    task: str
    system: str = Field(sa_column=Column(Text, nullable=False))
    messages: list[dict[str, Any]] = Field(sa_column=Column(JSONB, nullable=False))
    extra: dict[str, Any] = Field(default_factory=dict, sa_column=Column(JSONB, nullable=False))
    token_estimate: int
    created_at: datetime = Field(sa_column=tstz(index=True))


class DraftRow(SQLModel, table=True):
    """A candidate reply (or its refinement); workflow history carries only its ID."""

    __tablename__ = "drafts"
    __table_args__ = (Index("ix_drafts_agent_created", "agent", "created_at"),)

    id: str = Field(sa_column=ulid_pk())
    agent: str = Field(sa_column=Column(String(32), nullable=False))
    activation_id: str | None = Field(default=None, sa_column=ulid_col(nullable=True))
    text: str = Field(sa_column=Column(Text, nullable=False))
    created_at: datetime = Field(sa_column=tstz())


class ActivationRow(SQLModel, table=True):
    """One run of the response pipeline and how it ended."""

    __tablename__ = "activations"
    __table_args__ = (Index("ix_activations_agent_at", "agent", "completed_at"),)

    id: str = Field(sa_column=ulid_pk())
    agent: str = Field(sa_column=Column(String(32), nullable=False))
    event_id: str = Field(sa_column=ulid_col(index=True))
    conversation_id: str | None = Field(default=None, sa_column=ulid_col(nullable=True))
    trigger: str
    outcome: str
    text: str | None = Field(default=None, sa_column=Column(Text, nullable=True))
    reason: str | None = None
    degraded: bool = False
    completed_at: datetime = Field(sa_column=tstz())


class MarkerRow(SQLModel, table=True):
    """A completion marker, keyed by event ID; expires on its own (Appendix B)."""

    __tablename__ = "completion_markers"

    event_id: str = Field(sa_column=ulid_pk())
    agent: str = Field(sa_column=Column(String(32), nullable=False))
    activation_id: str | None = Field(default=None, sa_column=ulid_col(nullable=True))
    conversation_id: str | None = Field(default=None, sa_column=ulid_col(nullable=True))
    outcome: str
    text: str | None = Field(default=None, sa_column=Column(Text, nullable=True))
    reason: str | None = None
    degraded: bool = False
    completed_at: datetime = Field(sa_column=tstz())
    expires_at: datetime = Field(sa_column=tstz(index=True))


class OutboxRow(SQLModel, table=True):
    """A message the agent transmitted, once per activation, for channel adapters to deliver.

    Its delivery state (migration 0010) is written by the delivery workflow's activities only.
    """

    __tablename__ = "outbox"
    __table_args__ = (
        Index("ix_outbox_agent_created", "agent", "created_at"),
        Index("ix_outbox_status", "status", "created_at"),
        Index("ix_outbox_channel", "agent", "channel_key", "created_at"),
        Index("ix_outbox_event", "agent", "event_id"),
    )

    id: str = Field(sa_column=ulid_pk())
    activation_id: str = Field(sa_column=Column(String(26), unique=True, nullable=False))
    agent: str = Field(sa_column=Column(String(32), nullable=False))
    channel_key: str
    event_id: str | None = Field(default=None, sa_column=ulid_col(nullable=True))
    """The inbound event a reply answers (migration 0014); none for an unprompted message."""
    conversation_id: str | None = Field(default=None, sa_column=ulid_col(nullable=True))
    text: str = Field(sa_column=Column(Text, nullable=False))
    unprompted: bool = False
    created_at: datetime = Field(sa_column=tstz())
    status: str = Field(
        default="pending", sa_column=Column(String(16), nullable=False, server_default="pending")
    )
    """pending, delivered, awaiting_pickup, failed or blocked (``schemas.delivery``)."""
    attempts: int = Field(default=0, sa_column=Column(Integer, nullable=False, server_default="0"))
    last_error: str | None = Field(default=None, sa_column=Column(Text, nullable=True))
    delivered_at: datetime | None = Field(default=None, sa_column=tstz(nullable=True))
    external_id: str | None = Field(default=None, sa_column=Column(String(200), nullable=True))
    tokens: int | None = Field(default=None, sa_column=Column(Integer, nullable=True))
    """The message's estimated size, set once pacing let it through (the turn limit counts it)."""
    paced_until: datetime | None = Field(default=None, sa_column=tstz(nullable=True))
    """The earliest time pacing let it out (the next message on the channel waits from here)."""
