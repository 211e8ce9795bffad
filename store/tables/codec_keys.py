"""Data keys of the payload codec: one active key per agent, wrapped by the master key."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import ForeignKey, Index, LargeBinary, String, text
from sqlmodel import Column, Field, SQLModel

from store.tables.columns import tstz, ulid_pk

STACK_SCOPE = "*"
"""Scope of the deployment's shared key, for payloads that belong to no known agent."""


class CodecKeyRow(SQLModel, table=True):
    """One data key. Shredding clears ``wrapped_key`` and keeps the row as a tombstone.

    Payloads name the key's ``id``; once the key is gone, whatever Temporal still holds
    under it is unreadable.
    """

    __tablename__ = "codec_keys"
    __table_args__ = (
        Index(
            "uq_codec_keys_active_scope",
            "scope",
            unique=True,
            postgresql_where=text("shredded_at IS NULL"),
        ),
    )

    id: str = Field(sa_column=ulid_pk())
    scope: str = Field(sa_column=Column(String(32), nullable=False))
    agent: str | None = Field(
        default=None,
        sa_column=Column(
            String(32), ForeignKey("agents.handle", ondelete="CASCADE"), nullable=True, index=True
        ),
    )
    wrapped_key: bytes | None = Field(default=None, sa_column=Column(LargeBinary, nullable=True))
    created_at: datetime = Field(sa_column=tstz())
    shredded_at: datetime | None = Field(default=None, sa_column=tstz(nullable=True))
