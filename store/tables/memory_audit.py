"""The memory's paper trail: ranges on their way to becoming records, and records withdrawn.

Queries reach these tables through SQL (``store.queries.memory`` and
``store.queries.memory_formation``); the classes declare them for the metadata and for readers.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import Index, SmallInteger, String, Text, UniqueConstraint
from sqlalchemy.dialects.postgresql import ARRAY, JSONB
from sqlmodel import Column, Field, SQLModel

from store.tables.columns import agent_fk, text_array, tstz, ulid_col, ulid_pk


class MemoryFormation(SQLModel, table=True):
    """One range of a conversation's turns being consolidated into one memory record.

    ``status``: ``running`` (claimed by consolidation ``claimed_by``), ``done`` (became
    ``record_id``), ``failed`` (waits for a later consolidation) or ``empty`` (no stored turns
    were left to remember).
    """

    __tablename__ = "memory_formations"
    __table_args__ = (
        UniqueConstraint("conversation_id", "through_turn", name="uq_memory_formations_range"),
        Index("ix_memory_formations_agent_status", "agent", "status", "turn_first_at"),
    )

    id: str = Field(sa_column=ulid_pk())
    agent: str = Field(sa_column=agent_fk())
    conversation_id: str = Field(sa_column=ulid_col())
    channel_id: str = Field(sa_column=ulid_col())
    after_turn: str | None = Field(default=None, sa_column=ulid_col(nullable=True))
    through_turn: str = Field(sa_column=ulid_col())
    turn_first: str | None = Field(default=None, sa_column=ulid_col(nullable=True))
    turn_last: str | None = Field(default=None, sa_column=ulid_col(nullable=True))
    turn_first_at: datetime | None = Field(default=None, sa_column=tstz(nullable=True))
    turn_last_at: datetime | None = Field(default=None, sa_column=tstz(nullable=True))
    turns: int = 0
    status: str
    claimed_by: str | None = Field(default=None, sa_column=ulid_col(nullable=True))
    attempts: int = 1
    summary: str | None = Field(default=None, sa_column=Column(Text, nullable=True))
    derived_from: list[str] = Field(default_factory=list, sa_column=text_array())
    participants: list[str] = Field(default_factory=list, sa_column=text_array())
    importance: int | None = Field(default=None, sa_column=Column(SmallInteger, nullable=True))
    rubric: dict[str, Any] | None = Field(default=None, sa_column=Column(JSONB, nullable=True))
    emotions: dict[str, Any] | None = Field(default=None, sa_column=Column(JSONB, nullable=True))
    emotion: str | None = None
    sensitivity: str | None = None
    tags: list[str] | None = Field(default=None, sa_column=Column(ARRAY(String), nullable=True))
    record_id: str | None = Field(default=None, sa_column=ulid_col(nullable=True))
    error: str | None = Field(default=None, sa_column=Column(Text, nullable=True))
    created_at: datetime = Field(sa_column=tstz())
    updated_at: datetime = Field(sa_column=tstz())


class MemoryAudit(SQLModel, table=True):
    """A withdrawn record: who, when, why, and a snapshot of its metadata (never its text).

    No foreign key: the entry outlives the record (and the agent) it describes.
    """

    __tablename__ = "memory_audit"
    __table_args__ = (
        Index("ix_memory_audit_record", "record_id"),
        Index("ix_memory_audit_agent_at", "agent", "at"),
    )

    id: str = Field(sa_column=ulid_pk())
    agent: str = Field(sa_column=Column(String(32), nullable=False))
    record_id: str = Field(sa_column=ulid_col())
    action: str = Field(description="forget | cull")
    actor: str
    reason: str | None = Field(default=None, sa_column=Column(Text, nullable=True))
    # Always empty: a withdrawal erases the text (entries before 0007_erasure held it).
    summary: str | None = Field(default=None, sa_column=Column(Text, nullable=True))
    snapshot: dict[str, Any] = Field(default_factory=dict, sa_column=Column(JSONB, nullable=False))
    derived: list[str] = Field(default_factory=list, sa_column=text_array())
    at: datetime = Field(sa_column=tstz())
