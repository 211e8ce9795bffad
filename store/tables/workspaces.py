"""Shared workspaces, their members and their change log (``schemas.workspaces``)."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import BigInteger, Column, ForeignKey, Index, Integer, String, Text
from sqlmodel import Field, SQLModel

from store.tables.columns import tstz, ulid_col, ulid_pk


class WorkspaceRow(SQLModel, table=True):
    """One workspace: the engine's volume that holds its files."""

    __tablename__ = "workspaces"

    name: str = Field(sa_column=Column(String(32), primary_key=True))
    volume: str = Field(sa_column=Column(Text, nullable=False))
    created_by: str = Field(sa_column=Column(Text, nullable=False))
    created_at: datetime = Field(sa_column=tstz())


class WorkspaceMemberRow(SQLModel, table=True):
    """One agent's membership: ``rw`` or ``ro``."""

    __tablename__ = "workspace_members"
    __table_args__ = (Index("ix_workspace_members_agent", "agent"),)

    workspace: str = Field(
        sa_column=Column(
            String(32), ForeignKey("workspaces.name", ondelete="CASCADE"), primary_key=True
        )
    )
    agent: str = Field(
        sa_column=Column(
            String(32), ForeignKey("agents.handle", ondelete="CASCADE"), primary_key=True
        )
    )
    mode: str = Field(sa_column=Column(String(2), nullable=False))
    added_by: str = Field(sa_column=Column(Text, nullable=False))
    added_at: datetime = Field(sa_column=tstz())


class WorkspaceChangeRow(SQLModel, table=True):
    """One file one agent's sandbox changed; ``agent`` stays text so authorship outlives it."""

    __tablename__ = "workspace_changes"
    __table_args__ = (Index("ix_workspace_changes_at", "workspace", "at"),)

    id: str = Field(sa_column=ulid_pk())
    workspace: str = Field(
        sa_column=Column(
            String(32), ForeignKey("workspaces.name", ondelete="CASCADE"), nullable=False
        )
    )
    agent: str = Field(sa_column=Column(String(32), nullable=False))
    path: str = Field(sa_column=Column(Text, nullable=False))
    kind: str = Field(sa_column=Column(String(16), nullable=False))
    bytes_before: int = Field(sa_column=Column(BigInteger, nullable=False))
    bytes_after: int = Field(sa_column=Column(BigInteger, nullable=False))
    lines_added: int = Field(sa_column=Column(Integer, nullable=False))
    lines_removed: int = Field(sa_column=Column(Integer, nullable=False))
    excerpt: str = Field(sa_column=Column(Text, nullable=False))
    task_id: str | None = Field(default=None, sa_column=ulid_col(nullable=True))
    at: datetime = Field(sa_column=tstz())
