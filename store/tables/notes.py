"""Notes: durable text about the agent, a person or a channel (``schemas.notes``)."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import Boolean, ForeignKey, Index, String, Text
from sqlmodel import Column, Field, SQLModel

from store.tables.columns import agent_fk, tstz, ulid_col, ulid_pk


class NoteRow(SQLModel, table=True):
    """One note; ``supersedes`` names the note it replaced (one successor each, no cycles)."""

    __tablename__ = "notes"
    __table_args__ = (Index("ix_notes_scope", "agent", "scope", "scope_id"),)

    id: str = Field(sa_column=ulid_pk())
    agent: str = Field(sa_column=agent_fk())
    scope: str = Field(sa_column=Column(String(16), nullable=False))
    scope_id: str = Field(sa_column=Column(Text, nullable=False))
    text: str = Field(sa_column=Column(Text, nullable=False))
    pinned: bool = Field(sa_column=Column(Boolean, nullable=False))
    source: str = Field(sa_column=Column(String(16), nullable=False))
    written_by: str = Field(sa_column=Column(Text, nullable=False))
    activation_id: str | None = Field(default=None, sa_column=ulid_col(nullable=True))
    supersedes: str | None = Field(
        default=None,
        sa_column=Column(String(26), ForeignKey("notes.id", ondelete="SET NULL"), nullable=True),
    )
    created_at: datetime = Field(sa_column=tstz())
