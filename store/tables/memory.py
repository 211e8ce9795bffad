"""Long-term memory records (§5): first-person summaries with vectors and metadata."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from pgvector.sqlalchemy import Vector
from sqlalchemy import ForeignKey, Index, SmallInteger, String, Text
from sqlalchemy.dialects.postgresql import JSONB
from sqlmodel import Column, Field, SQLModel

from store.tables.columns import agent_fk, text_array, tstz, ulid_col, ulid_pk


class MemoryRecord(SQLModel, table=True):
    """An autobiographical record. The vector column's size comes from the configured encoder.

    The ORM column is dimension-free; the migration creates ``vector(N)`` with N from settings
    and an HNSW index for cosine distance.
    """

    __tablename__ = "memory_records"
    __table_args__ = (
        Index("ix_memory_agent_channel", "agent", "channel_id", "id"),
        Index("ix_memory_tags", "tags", postgresql_using="gin"),
    )

    id: str = Field(sa_column=ulid_pk())
    agent: str = Field(sa_column=agent_fk())
    channel_id: str = Field(sa_column=Column(String(26), ForeignKey("channels.id"), nullable=False))
    conversation_id: str | None = Field(default=None, sa_column=ulid_col(nullable=True))
    summary: str = Field(sa_column=Column(Text, nullable=False))
    embedding: Any = Field(default=None, sa_column=Column(Vector(), nullable=True))
    embed_model: str | None = None
    importance: int = Field(sa_column=Column(SmallInteger, nullable=False))
    tags: list[str] = Field(default_factory=list, sa_column=text_array())
    emotion: str | None = None
    sensitivity: str = Field(default="private")
    participants: list[str] = Field(default_factory=list, sa_column=text_array())
    turn_first: str | None = Field(default=None, sa_column=ulid_col(nullable=True))
    turn_last: str | None = Field(default=None, sa_column=ulid_col(nullable=True))
    created_at: datetime = Field(sa_column=tstz())
    forgotten_at: datetime | None = Field(default=None, sa_column=tstz(nullable=True))
    # Memory formation (migration 0003): what the record was formed with and from.
    derived_from: list[str] = Field(default_factory=list, sa_column=text_array())
    turn_first_at: datetime | None = Field(default=None, sa_column=tstz(nullable=True))
    turn_last_at: datetime | None = Field(default=None, sa_column=tstz(nullable=True))
    rubric: dict[str, Any] | None = Field(default=None, sa_column=Column(JSONB, nullable=True))
    emotions: dict[str, Any] | None = Field(default=None, sa_column=Column(JSONB, nullable=True))
    # Levels (migration 0019): 1 for a memory of dialog, 2 and up for a recollection folded
    # from records of the level below; ``folded_into`` is the link up.
    level: int = Field(default=1, sa_column=Column(SmallInteger, nullable=False, default=1))
    folded_into: str | None = Field(
        default=None,
        sa_column=Column(
            String(26), ForeignKey("memory_records.id", ondelete="SET NULL"), nullable=True
        ),
    )
