"""What placing a call leaves behind: the intent to dial, written before the transport dials."""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum

from sqlalchemy import Column, Index, String, Text
from sqlmodel import Field, SQLModel

from store.tables.columns import agent_fk, tstz, ulid_col, ulid_pk


class DialStatus(StrEnum):
    """Where a dial intent stands."""

    DIALING = "dialing"
    """Written before the transport dials; its answer is not recorded (yet, or ever)."""
    PLACED = "placed"
    """The transport placed the call: its call ID is recorded."""
    FAILED = "failed"
    """The transport refused, or did not answer and holds no call with the intent's key."""


class DialIntentRow(SQLModel, table=True):
    """One call ``place_call`` means to place, keyed by the tool call's ID.

    ``dialing`` until the transport's answer is recorded (``placed``, with its call ID) or it
    refused (``failed``, with its reason). A row left ``dialing`` is a dial whose answer may
    have been lost: the transport is asked about it before anything dials again.
    """

    __tablename__ = "dial_intents"
    __table_args__ = (Index("ix_dial_intents_agent", "agent", "created_at"),)

    id: str = Field(sa_column=ulid_pk())
    agent: str = Field(sa_column=agent_fk())
    person_id: str = Field(sa_column=ulid_col())
    number: str = Field(sa_column=Column(Text, nullable=False))
    status: str = Field(sa_column=Column(String(16), nullable=False))
    call_id: str | None = Field(default=None, sa_column=Column(String(128), nullable=True))
    call_status: str | None = Field(default=None, sa_column=Column(String(64), nullable=True))
    error: str | None = Field(default=None, sa_column=Column(Text, nullable=True))
    created_at: datetime = Field(sa_column=tstz())
    settled_at: datetime | None = Field(default=None, sa_column=tstz(nullable=True))
