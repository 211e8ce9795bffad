"""Agents, the people they meet, those people's identities, and the channels they talk on."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import BigInteger, ForeignKey, Index, String, UniqueConstraint
from sqlalchemy import Identity as SAIdentity
from sqlmodel import Column, Field, SQLModel

from store.tables.columns import agent_fk, jsonb, tstz, ulid_col, ulid_pk


class Agent(SQLModel, table=True):
    """A Persyn: handle, seed persona and settings. Its memories are keyed by ``handle``."""

    __tablename__ = "agents"

    handle: str = Field(sa_column=Column(String(32), primary_key=True))
    name: str
    persona: str
    config: dict[str, Any] = Field(default_factory=dict, sa_column=jsonb())
    created_at: datetime = Field(sa_column=tstz())
    updated_at: datetime = Field(sa_column=tstz())


class Person(SQLModel, table=True):
    """Someone an agent has met; unifies that someone's identities across channels (§4.4)."""

    __tablename__ = "people"

    id: str = Field(sa_column=ulid_pk())
    agent: str = Field(sa_column=agent_fk(index=True))
    display_name: str
    created_at: datetime = Field(sa_column=tstz())
    last_seen_at: datetime = Field(sa_column=tstz())
    preferred_channel: str | None = None
    name_curated: bool = Field(
        default=False, description="The operator named them; channels' names no longer replace it."
    )


class Identity(SQLModel, table=True):
    """One way to reach a person; looked up by service + channel + speaker id (§4.5)."""

    __tablename__ = "identities"
    __table_args__ = (
        UniqueConstraint("agent", "service", "channel", "speaker_id", name="uq_identity_lookup"),
    )

    id: str = Field(sa_column=ulid_pk())
    agent: str = Field(sa_column=agent_fk())
    person_id: str = Field(
        sa_column=Column(
            String(26), ForeignKey("people.id", ondelete="CASCADE"), index=True, nullable=False
        )
    )
    service: str
    channel: str
    speaker_id: str
    created_at: datetime = Field(sa_column=tstz())


class ContactAddressRow(SQLModel, table=True):
    """An address the operator recorded for a person, with a type label (migration 0008)."""

    __tablename__ = "contact_addresses"
    __table_args__ = (
        UniqueConstraint("agent", "person_id", "kind", "address", name="uq_contact_address"),
    )

    id: str = Field(sa_column=ulid_pk())
    agent: str = Field(sa_column=Column(String(32), nullable=False))
    person_id: str = Field(
        sa_column=Column(
            String(26), ForeignKey("people.id", ondelete="CASCADE"), index=True, nullable=False
        )
    )
    kind: str
    address: str
    created_at: datetime = Field(sa_column=tstz())


class ContactFoldRow(SQLModel, table=True):
    """The audit of one operator fold: who folded which person into which, when (0008)."""

    __tablename__ = "contact_folds"

    id: int | None = Field(
        default=None, sa_column=Column(BigInteger, SAIdentity(always=True), primary_key=True)
    )
    agent: str = Field(sa_column=Column(String(32), nullable=False))
    folded: str = Field(sa_column=Column(String(26), nullable=False))
    survivor: str = Field(sa_column=Column(String(26), nullable=False))
    name: str
    folded_by: str
    folded_at: datetime = Field(sa_column=tstz())
    moved: dict[str, Any] = Field(default_factory=dict, sa_column=jsonb())


class Channel(SQLModel, table=True):
    """A surface an agent talks on; memory is compartmentalised by channel or channel group."""

    __tablename__ = "channels"
    __table_args__ = (
        UniqueConstraint("agent", "key", name="uq_channel_key"),
        Index("ix_channels_agent_group", "agent", "memory_group"),
    )

    id: str = Field(sa_column=ulid_pk())
    agent: str = Field(sa_column=agent_fk())
    key: str = Field(description="service:channel")
    service: str
    channel: str
    memory_group: str | None = Field(
        default=None, description="Channels in one group share memory; none shares nothing."
    )
    created_at: datetime = Field(sa_column=tstz())
    last_active_at: datetime = Field(sa_column=tstz())
    last_person_id: str | None = Field(default=None, sa_column=ulid_col(nullable=True))


class AgentDeletionRow(SQLModel, table=True):
    """The audit of one deleted agent: who deleted it, when, and how many rows went (0013).

    No foreign key: the entry outlives the agent. It holds the handle, the operator and row
    counts per table, never anything the agent said or was told.
    """

    __tablename__ = "agent_deletions"

    id: str = Field(sa_column=ulid_pk())
    agent: str = Field(sa_column=Column(String(32), nullable=False, index=True))
    deleted_by: str = Field(sa_column=Column(String(200), nullable=False))
    deleted_at: datetime = Field(sa_column=tstz())
    erased: dict[str, Any] = Field(default_factory=dict, sa_column=jsonb())
    """Rows deleted per table (usage records: summed into ``usage_daily`` first)."""
    keys_shredded: int = 0
    """Payload keys destroyed by the deletion (0 when a shred had destroyed them before)."""
