"""Column helpers shared by the tables: ULID keys and timezone-aware timestamps."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from sqlalchemy import Column, DateTime, ForeignKey, String
from sqlalchemy.dialects.postgresql import ARRAY, JSONB


def utcnow() -> datetime:
    """The current time, timezone-aware."""
    return datetime.now(UTC)


def ulid_pk() -> Any:
    """A ULID primary-key column (26 characters)."""
    return Column(String(26), primary_key=True)


def ulid_col(*, nullable: bool = False, index: bool = False) -> Any:
    """A ULID column."""
    return Column(String(26), nullable=nullable, index=index)


def tstz(*, nullable: bool = False, index: bool = False) -> Any:
    """A ``timestamptz`` column."""
    return Column(DateTime(timezone=True), nullable=nullable, index=index)


def text_array() -> Any:
    """A ``text[]`` column defaulting to empty."""
    return Column(ARRAY(String), nullable=False, server_default="{}")


def jsonb() -> Any:
    """A ``jsonb`` column defaulting to an empty object."""
    return Column(JSONB, nullable=False, server_default="{}")


def agent_fk(*, index: bool = False) -> Any:
    """The owning agent's handle; rows go when the agent goes."""
    return Column(
        String(32), ForeignKey("agents.handle", ondelete="CASCADE"), nullable=False, index=index
    )
