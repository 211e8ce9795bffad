"""The web channel's bearer tokens (one per integrator, stored as a hash) and event owners."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import String
from sqlmodel import Column, Field, SQLModel

from store.tables.columns import agent_fk, text_array, tstz, ulid_col, ulid_pk


class WebTokenRow(SQLModel, table=True):
    """An integrator's token. The plain token is shown once at creation and never stored.

    ``agents`` limits the token to those handles; empty means every agent. A revoked token
    keeps its row (who, when) and is refused. ``tenant`` is the namespace the token's
    channels, speakers, streams and markers live in: its own ID, or the ID of the token it
    replaced (``persyn tokens rotate``), so a replacement keeps the integrator's history.
    """

    __tablename__ = "web_tokens"

    id: str = Field(sa_column=ulid_pk())
    name: str = Field(sa_column=Column(String(64), nullable=False))
    token_hash: str = Field(sa_column=Column(String(64), nullable=False, unique=True))
    agents: list[str] = Field(default_factory=list, sa_column=text_array())
    tenant: str = Field(sa_column=ulid_col())
    created_at: datetime = Field(sa_column=tstz())
    revoked_at: datetime | None = Field(default=None, sa_column=tstz(nullable=True))


class WebEventRow(SQLModel, table=True):
    """Which tenant posted an event: a marker is read only by the tenant that posted it.

    Kept a day (markers live an hour); pruned as new events are posted.
    """

    __tablename__ = "web_events"

    event_id: str = Field(sa_column=ulid_pk())
    agent: str = Field(sa_column=agent_fk())
    tenant: str = Field(sa_column=ulid_col())
    created_at: datetime = Field(sa_column=tstz(index=True))
