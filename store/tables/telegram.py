"""The Telegram channel's own records: the poller's offset, inbound messages, sent parts.

No message text is kept here: the dialog holds it. These rows only map Persyn's IDs to
Telegram's, so a restarted poller neither repeats nor skips an update, a reply answers the
message it replies to, and a retried delivery does not send a part twice.
"""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import BigInteger, Column, Index, Integer, String
from sqlmodel import Field, SQLModel

from store.tables.columns import agent_fk, tstz, ulid_pk


class TelegramOffsetRow(SQLModel, table=True):
    """The next update a bot's poller asks for (Telegram forgets every update before it)."""

    __tablename__ = "telegram_offsets"

    bot_id: int = Field(sa_column=Column(BigInteger, primary_key=True, autoincrement=False))
    next_offset: int = Field(sa_column=Column(BigInteger, nullable=False))
    updated_at: datetime = Field(sa_column=tstz())


class TelegramInboundRow(SQLModel, table=True):
    """Which Telegram message an inbound event came from."""

    __tablename__ = "telegram_inbound"
    __table_args__ = (Index("ix_telegram_inbound_chat_message", "agent", "chat_id", "message_id"),)

    event_id: str = Field(sa_column=ulid_pk())
    agent: str = Field(sa_column=agent_fk())
    chat_id: int = Field(sa_column=Column(BigInteger, nullable=False))
    message_id: int = Field(sa_column=Column(BigInteger, nullable=False))
    received_at: datetime = Field(sa_column=tstz())


class TelegramSentRow(SQLModel, table=True):
    """One part of an outbox message Telegram accepted (long messages go in several parts)."""

    __tablename__ = "telegram_sent"

    outbox_id: str = Field(sa_column=Column(String(26), primary_key=True))
    part: int = Field(sa_column=Column(Integer, primary_key=True, autoincrement=False))
    chat_id: int = Field(sa_column=Column(BigInteger, nullable=False))
    message_id: int = Field(sa_column=Column(BigInteger, nullable=False))
    sent_at: datetime = Field(sa_column=tstz())
