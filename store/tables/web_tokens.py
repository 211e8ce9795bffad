"""Bearer tokens of the web channel: one per integrator, stored only as a hash."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import String
from sqlmodel import Column, Field, SQLModel

from store.tables.columns import text_array, tstz, ulid_pk


class WebTokenRow(SQLModel, table=True):
    """An integrator's token. The plain token is shown once at creation and never stored.

    ``agents`` limits the token to those handles; empty means every agent. A revoked token
    keeps its row (who, when) and is refused.
    """

    __tablename__ = "web_tokens"

    id: str = Field(sa_column=ulid_pk())
    name: str = Field(sa_column=Column(String(64), nullable=False))
    token_hash: str = Field(sa_column=Column(String(64), nullable=False, unique=True))
    agents: list[str] = Field(default_factory=list, sa_column=text_array())
    created_at: datetime = Field(sa_column=tstz())
    revoked_at: datetime | None = Field(default=None, sa_column=tstz(nullable=True))
