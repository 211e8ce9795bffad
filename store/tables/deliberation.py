"""Deliberation records: conclusions parked for the next turn, and every decision to speak."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import Index, String, Text, text
from sqlalchemy.dialects.postgresql import JSONB
from sqlmodel import Column, Field, SQLModel

from store.tables.columns import agent_fk, text_array, tstz, ulid_col, ulid_pk


class ParkedConclusionRow(SQLModel, table=True):
    """A deferred critique's conclusion, waiting for the agent's next turn on its channel.

    Keyed by agent and channel, not by conversation: it outlives the conversation it came from.
    ``consumed_by`` is the activation that spoke with it woven into its prompt.
    """

    __tablename__ = "parked_conclusions"
    __table_args__ = (
        Index(
            "ix_parked_conclusions_waiting",
            "agent",
            "channel_key",
            "created_at",
            postgresql_where=text("consumed_at IS NULL"),
        ),
    )

    id: str = Field(sa_column=ulid_pk())
    agent: str = Field(sa_column=agent_fk())
    channel_key: str = Field(sa_column=Column(String, nullable=False))
    activation_id: str = Field(sa_column=Column(String(26), unique=True, nullable=False))
    conversation_id: str = Field(sa_column=ulid_col())
    candidate: str = Field(sa_column=Column(Text, nullable=False))
    objections: list[dict[str, Any]] = Field(sa_column=Column(JSONB, nullable=False))
    refined: str | None = Field(default=None, sa_column=Column(Text, nullable=True))
    created_at: datetime = Field(sa_column=tstz())
    expires_at: datetime = Field(sa_column=tstz())
    consumed_at: datetime | None = Field(default=None, sa_column=tstz(nullable=True))
    consumed_by: str | None = Field(default=None, sa_column=ulid_col(nullable=True))


class SpeakDecisionRow(SQLModel, table=True):
    """Why an activation spoke or stayed silent, and how its reply was deliberated."""

    __tablename__ = "speak_decisions"
    __table_args__ = (Index("ix_speak_decisions_agent_at", "agent", "decided_at"),)

    activation_id: str = Field(sa_column=ulid_pk())
    agent: str = Field(sa_column=agent_fk())
    event_id: str = Field(sa_column=ulid_col(index=True))
    channel_key: str = Field(sa_column=Column(String, nullable=False))
    speak: bool
    reason: str = Field(sa_column=Column(Text, nullable=False))
    basis: str
    transmitted: bool
    mode: str | None = None
    lenses: list[str] = Field(default_factory=list, sa_column=text_array())
    objections: int = 0
    refined: bool = False
    decided_at: datetime = Field(sa_column=tstz())
