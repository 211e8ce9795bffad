"""Knowledge-graph tables: entities (nodes) and the relations between them (edges)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import ForeignKey, String, Text
from sqlmodel import Column, Field, SQLModel

from store.tables.columns import agent_fk, jsonb, tstz, ulid_col, ulid_pk


class GraphNodeRow(SQLModel, table=True):
    """An entity in the agent's life, unique per agent, type and normalised name.

    ``person_id`` links the node to a person record when the entity is someone the agent
    has met, so a contact fold can move it.
    """

    __tablename__ = "graph_nodes"

    id: str = Field(sa_column=ulid_pk())
    agent: str = Field(sa_column=agent_fk())
    type: str = Field(sa_column=Column(String(64), nullable=False))
    name: str = Field(sa_column=Column(Text, nullable=False))
    name_key: str = Field(sa_column=Column(Text, nullable=False))
    attributes: dict[str, Any] = Field(default_factory=dict, sa_column=jsonb())
    person_id: str | None = Field(
        default=None,
        sa_column=Column(String(26), ForeignKey("people.id", ondelete="SET NULL"), nullable=True),
    )
    created_at: datetime = Field(sa_column=tstz())
    updated_at: datetime = Field(sa_column=tstz())


class GraphEdgeRow(SQLModel, table=True):
    """A relation learned from a conversation; invalidated, never deleted, when contradicted."""

    __tablename__ = "graph_edges"

    id: str = Field(sa_column=ulid_pk())
    agent: str = Field(sa_column=agent_fk())
    type: str = Field(sa_column=Column(String(64), nullable=False))
    source_id: str = Field(
        sa_column=Column(
            String(26), ForeignKey("graph_nodes.id", ondelete="CASCADE"), nullable=False
        )
    )
    target_id: str = Field(
        sa_column=Column(
            String(26), ForeignKey("graph_nodes.id", ondelete="CASCADE"), nullable=False
        )
    )
    conversation_id: str | None = Field(default=None, sa_column=ulid_col(nullable=True))
    valid_from: datetime = Field(sa_column=tstz())
    invalidated_at: datetime | None = Field(default=None, sa_column=tstz(nullable=True))
    invalidated_by: str | None = Field(default=None, sa_column=ulid_col(nullable=True))
