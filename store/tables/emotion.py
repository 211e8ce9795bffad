"""The agent's emotional trajectory: one reading per exchange (spec §4.9)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import Column, Float, Index, String
from sqlalchemy.dialects.postgresql import JSONB
from sqlmodel import Field, SQLModel

from store.tables.columns import agent_fk, tstz, ulid_col, ulid_pk


class EmotionReadingRow(SQLModel, table=True):
    """The classifier's distribution after one exchange, normalised, with its top category.

    One row per activation (``activation_id`` is unique, so a retried classification stores
    nothing twice). The current state is computed from the newest row when it is read.
    """

    __tablename__ = "emotion_readings"
    __table_args__ = (
        Index("ix_emotion_readings_agent_at", "agent", "at"),
        Index("ix_emotion_readings_conversation_at", "conversation_id", "at"),
    )

    id: str = Field(sa_column=ulid_pk())
    agent: str = Field(sa_column=agent_fk())
    conversation_id: str = Field(sa_column=ulid_col())
    channel_key: str = Field(sa_column=Column(String, nullable=False))
    activation_id: str = Field(sa_column=Column(String(26), unique=True, nullable=False))
    at: datetime = Field(sa_column=tstz())
    top: str = Field(sa_column=Column(String(16), nullable=False))
    probability: float = Field(sa_column=Column(Float, nullable=False))
    distribution: dict[str, Any] = Field(sa_column=Column(JSONB, nullable=False))
