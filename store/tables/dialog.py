"""Conversations and their verbatim dialog (full-text indexed)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from pgvector.sqlalchemy import Vector
from sqlalchemy import BigInteger, Computed, ForeignKey, Index, Integer, String, Text
from sqlalchemy import text as sql_text
from sqlalchemy.dialects.postgresql import TSVECTOR
from sqlmodel import Column, Field, SQLModel

from store.tables.columns import agent_fk, text_array, tstz, ulid_col, ulid_pk


class Conversation(SQLModel, table=True):
    """A session with auto-expiry; its ID is a ULID, so sorting by ID is chronological."""

    __tablename__ = "conversations"
    __table_args__ = (Index("ix_conversations_agent_channel", "agent", "channel_id", "id"),)

    id: str = Field(sa_column=ulid_pk())
    agent: str = Field(sa_column=agent_fk())
    channel_id: str = Field(sa_column=Column(String(26), ForeignKey("channels.id"), nullable=False))
    status: str = Field(default="open", description="open | closed")
    opened_at: datetime = Field(sa_column=tstz())
    closed_at: datetime | None = Field(default=None, sa_column=tstz(nullable=True))
    close_reason: str | None = None
    turns: int = 0
    participants: list[str] = Field(default_factory=list, sa_column=text_array())
    source: str = Field(default="live", description="live | import")


class DialogTurnRow(SQLModel, table=True):
    """One verbatim utterance; ``id`` is the turn's ULID (the inbound event's for a person).

    ``id`` is a key, never an order: a client sets the time part of its event IDs. Dialog is
    ordered by ``seq``, which PostgreSQL assigns as each turn is written (migration 0007).
    """

    __tablename__ = "dialog_turns"
    __table_args__ = (
        Index("ix_dialog_turns_conversation", "conversation_id", "id"),
        Index("ix_dialog_turns_conversation_seq", "conversation_id", "seq", unique=True),
        Index("ix_dialog_turns_agent_channel_at", "agent", "channel_id", "at"),
        Index("ix_dialog_turns_tsv", "tsv", postgresql_using="gin"),
        Index("ix_dialog_turns_tags", "tags", postgresql_using="gin"),
    )

    id: str = Field(sa_column=ulid_pk())
    agent: str = Field(sa_column=agent_fk())
    conversation_id: str = Field(
        sa_column=Column(
            String(26), ForeignKey("conversations.id", ondelete="CASCADE"), nullable=False
        )
    )
    channel_id: str = Field(sa_column=Column(String(26), ForeignKey("channels.id"), nullable=False))
    role: str = Field(description="person | agent")
    speaker_id: str
    speaker_name: str
    person_id: str | None = Field(default=None, sa_column=ulid_col(nullable=True))
    text: str = Field(sa_column=Column(Text, nullable=False))
    at: datetime = Field(sa_column=tstz())
    seq: int | None = Field(
        default=None,
        sa_column=Column(
            BigInteger, nullable=False, server_default=sql_text("nextval('dialog_turns_seq_seq')")
        ),
        description="Arrival order, assigned by the server when the turn is written.",
    )
    tags: list[str] = Field(default_factory=list, sa_column=text_array())
    tsv: str | None = Field(
        default=None,
        sa_column=Column(
            TSVECTOR,
            Computed("to_tsvector('english', speaker_name || ' ' || text)", persisted=True),
        ),
    )
    # Dialog search (migration 0002): a vector, the weighted search document and its length
    # (both kept by a trigger), and the source's own ID for imported turns.
    embedding: Any = Field(default=None, sa_column=Column(Vector(), nullable=True))
    embed_model: str | None = None
    source_ref: str | None = None
    search_tsv: str | None = Field(default=None, sa_column=Column(TSVECTOR, nullable=True))
    search_len: int = Field(
        default=0, sa_column=Column(Integer, nullable=False, server_default="0")
    )


class DialogSearchStats(SQLModel, table=True):
    """Per channel: how many turns and how many words, for BM25 (kept by triggers)."""

    __tablename__ = "dialog_search_stats"

    agent: str = Field(
        sa_column=Column(
            String(32), ForeignKey("agents.handle", ondelete="CASCADE"), primary_key=True
        )
    )
    channel_id: str = Field(sa_column=Column(String(26), primary_key=True))
    docs: int = Field(sa_column=Column(BigInteger, nullable=False))
    total_len: int = Field(sa_column=Column(BigInteger, nullable=False))


class DialogSearchTerm(SQLModel, table=True):
    """Per channel and lexeme: how many turns hold it, for BM25 (kept by triggers)."""

    __tablename__ = "dialog_search_terms"

    agent: str = Field(
        sa_column=Column(
            String(32), ForeignKey("agents.handle", ondelete="CASCADE"), primary_key=True
        )
    )
    channel_id: str = Field(sa_column=Column(String(26), primary_key=True))
    lexeme: str = Field(sa_column=Column(Text, primary_key=True))
    docs: int
