"""Observations (§4.4): facts about a person, or about the agent itself, with their provenance.

A fact that changes is never overwritten: the new record points at the one it replaces through
``supersedes`` and the old one becomes ``superseded``. The chain is the provenance of what the
agent believes now, so superseded records are kept for good.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from pgvector.sqlalchemy import Vector
from sqlalchemy import CheckConstraint, ForeignKey, Index, String, Text
from sqlmodel import Column, Field, SQLModel

from store.tables.columns import agent_fk, tstz, ulid_col, ulid_pk

TRUST_LABELS = ("self", "told", "inferred", "operator")
"""Where a fact came from: the subject, someone else, the agent's inference, an operator."""

STATUSES = ("active", "superseded")


class ObservationRow(SQLModel, table=True):
    """One fact about a subject. ``person_id`` is empty when the subject is the agent itself.

    The vector column is dimension-free here; the migration sizes it from the configured
    encoder, as for ``memory_records``.
    """

    __tablename__ = "observations"
    __table_args__ = (
        Index("ix_observations_subject", "agent", "person_id", "status"),
        CheckConstraint(
            "trust IN ('self', 'told', 'inferred', 'operator')", name="ck_observations_trust"
        ),
        CheckConstraint("status IN ('active', 'superseded')", name="ck_observations_status"),
    )

    id: str = Field(sa_column=ulid_pk())
    agent: str = Field(sa_column=agent_fk())
    person_id: str | None = Field(
        default=None,
        sa_column=Column(String(26), ForeignKey("people.id", ondelete="CASCADE"), nullable=True),
    )
    type: str = Field(sa_column=Column(String(64), nullable=False))
    value: str = Field(sa_column=Column(Text, nullable=False))
    observed_at: datetime = Field(sa_column=tstz())
    conversation_id: str | None = Field(default=None, sa_column=ulid_col(nullable=True))
    turn_first: str | None = Field(default=None, sa_column=ulid_col(nullable=True))
    turn_last: str | None = Field(default=None, sa_column=ulid_col(nullable=True))
    trust: str = Field(sa_column=Column(String(16), nullable=False))
    status: str = Field(default="active", sa_column=Column(String(16), nullable=False))
    supersedes: str | None = Field(
        default=None,
        sa_column=Column(String(26), ForeignKey("observations.id"), nullable=True),
    )
    superseded_at: datetime | None = Field(default=None, sa_column=tstz(nullable=True))
    reason: str | None = Field(
        default=None,
        sa_column=Column(Text, nullable=True),
        description="Why this record was written, or (once superseded) why it was retired.",
    )
    embedding: Any = Field(default=None, sa_column=Column(Vector(), nullable=True))
    created_at: datetime = Field(sa_column=tstz())


class ObservationBriefRow(SQLModel, table=True):
    """A dossier on one subject (a person's ID, or ``self``), valid while its fingerprint is."""

    __tablename__ = "observation_briefs"

    agent: str = Field(
        sa_column=Column(
            String(32), ForeignKey("agents.handle", ondelete="CASCADE"), primary_key=True
        )
    )
    subject: str = Field(sa_column=Column(String(26), primary_key=True))
    fingerprint: str = Field(sa_column=Column(String(64), nullable=False))
    brief: str = Field(sa_column=Column(Text, nullable=False))
    written_at: datetime = Field(sa_column=tstz())
