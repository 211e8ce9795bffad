"""Autonomy records: reminders, heartbeats, goals, quick facts, the autonomy log, tool calls."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import ForeignKey, Index, Integer, String, Text, UniqueConstraint
from sqlalchemy.dialects.postgresql import JSONB
from sqlmodel import Column, Field, SQLModel

from store.tables.columns import agent_fk, tstz, ulid_col, ulid_pk


class HeartbeatRow(SQLModel, table=True):
    """An agent's heartbeat: bootstrapped once, deleted only by the operator, durably."""

    __tablename__ = "heartbeats"

    agent: str = Field(
        sa_column=Column(
            String(32), ForeignKey("agents.handle", ondelete="CASCADE"), primary_key=True
        )
    )
    state: str = Field(description="active | deleted")
    interval_minutes: float
    task_queue: str
    bootstrapped_at: datetime = Field(sa_column=tstz())
    deleted_at: datetime | None = Field(default=None, sa_column=tstz(nullable=True))
    restored_at: datetime | None = Field(default=None, sa_column=tstz(nullable=True))
    updated_at: datetime = Field(sa_column=tstz())


class ReminderRow(SQLModel, table=True):
    """A reminder the agent set; its schedule ``reminder/{id}`` exists while it is active."""

    __tablename__ = "reminders"
    __table_args__ = (Index("ix_reminders_agent_status", "agent", "status"),)

    id: str = Field(sa_column=ulid_pk())
    agent: str = Field(sa_column=agent_fk())
    objective: str = Field(sa_column=Column(Text, nullable=False))
    kind: str = Field(description="one_shot | recurring")
    status: str = Field(description="active | done | cancelled")
    at: datetime | None = Field(default=None, sa_column=tstz(nullable=True))
    every_minutes: float | None = None
    cron: str | None = None
    timezone: str = "UTC"
    task_queue: str
    created_in: str | None = Field(default=None, sa_column=ulid_col(nullable=True))
    for_person: str | None = Field(
        default=None,
        sa_column=ulid_col(nullable=True),
        description="The person it is sent to when it fires (a reminder they asked for).",
    )
    for_channel: str | None = Field(
        default=None,
        sa_column=Column(Text, nullable=True),
        description="The channel key (service:channel) it is sent on.",
    )
    fired: int = 0
    last_fired_at: datetime | None = Field(default=None, sa_column=tstz(nullable=True))
    created_at: datetime = Field(sa_column=tstz())
    updated_at: datetime = Field(sa_column=tstz())


class GoalRow(SQLModel, table=True):
    """A goal: constitutional fields (what it is) and operational ones (the agent's own)."""

    __tablename__ = "goals"
    __table_args__ = (Index("ix_goals_agent_status", "agent", "status"),)

    id: str = Field(sa_column=ulid_pk())
    agent: str = Field(sa_column=agent_fk())
    description: str = Field(sa_column=Column(Text, nullable=False))
    status: str
    note: str | None = Field(default=None, sa_column=Column(Text, nullable=True))
    created_in: str | None = Field(default=None, sa_column=ulid_col(nullable=True))
    created_at: datetime = Field(sa_column=tstz())
    updated_at: datetime = Field(sa_column=tstz())
    closed_at: datetime | None = Field(default=None, sa_column=tstz(nullable=True))
    # Constitutional (migration 0018): changed after creation only by the operator.
    title: str | None = Field(default=None, sa_column=Column(Text, nullable=True))
    kind: str = Field(default="goal", sa_column=Column(String(16), nullable=False))
    progress_signal: str | None = Field(default=None, sa_column=Column(Text, nullable=True))
    set_by: str = Field(default="agent", sa_column=Column(String(16), nullable=False))
    # Operational: the agent's own, through update_goal.
    state: str | None = Field(default=None, sa_column=Column(Text, nullable=True))
    next_step: str | None = Field(default=None, sa_column=Column(Text, nullable=True))
    last_step: str | None = Field(default=None, sa_column=Column(Text, nullable=True))
    last_step_at: datetime | None = Field(default=None, sa_column=tstz(nullable=True))
    blocked_by: str | None = Field(default=None, sa_column=Column(Text, nullable=True))
    moved_at: datetime | None = Field(default=None, sa_column=tstz(nullable=True))


class GoalRequestRow(SQLModel, table=True):
    """A change to a goal's constitutional field the agent asked for, and its decision."""

    __tablename__ = "goal_requests"
    __table_args__ = (Index("ix_goal_requests_agent_status", "agent", "status"),)

    id: str = Field(sa_column=ulid_pk())
    agent: str = Field(sa_column=agent_fk())
    goal_id: str = Field(
        sa_column=Column(String(26), ForeignKey("goals.id", ondelete="CASCADE"), nullable=False)
    )
    field: str = Field(sa_column=Column(String(32), nullable=False))
    value: str = Field(sa_column=Column(Text, nullable=False))
    reason: str | None = Field(default=None, sa_column=Column(Text, nullable=True))
    status: str = Field(sa_column=Column(String(16), nullable=False))
    asked_in: str | None = Field(default=None, sa_column=ulid_col(nullable=True))
    created_at: datetime = Field(sa_column=tstz())
    decided_at: datetime | None = Field(default=None, sa_column=tstz(nullable=True))
    decided_by: str | None = Field(default=None, sa_column=Column(Text, nullable=True))


class QuickFactRow(SQLModel, table=True):
    """One entry of the scratchpad about a person (their ID) or about ``self``."""

    __tablename__ = "quick_facts"
    __table_args__ = (UniqueConstraint("agent", "subject", "key", name="uq_quick_fact"),)

    id: str = Field(sa_column=ulid_pk())
    agent: str = Field(sa_column=agent_fk())
    subject: str
    key: str
    value: str = Field(sa_column=Column(Text, nullable=False))
    updated_at: datetime = Field(sa_column=tstz())


class AutonomyLogRow(SQLModel, table=True):
    """One firing of a heartbeat or reminder, keyed by the impulse's event ID."""

    __tablename__ = "autonomy_log"
    __table_args__ = (Index("ix_autonomy_log_agent_at", "agent", "fired_at"),)

    event_id: str = Field(sa_column=ulid_pk())
    agent: str = Field(sa_column=agent_fk())
    kind: str = Field(description="heartbeat | reminder")
    reminder_id: str | None = Field(default=None, sa_column=ulid_col(nullable=True))
    objective: str | None = Field(default=None, sa_column=Column(Text, nullable=True))
    delivered: bool
    reason: str | None = None
    assessment: str | None = Field(default=None, sa_column=Column(Text, nullable=True))
    template: str | None = None
    fired_at: datetime = Field(sa_column=tstz())


class ToolCallRow(SQLModel, table=True):
    """One tool call of the tool loop: arguments in, result out."""

    __tablename__ = "tool_calls"
    __table_args__ = (
        Index("ix_tool_calls_activation", "activation_id"),
        Index("ix_tool_calls_prompt_round", "prompt_id", "round", "seq"),
        Index("ix_tool_calls_agent_at", "agent", "created_at"),
    )

    id: str = Field(sa_column=ulid_pk())
    agent: str = Field(sa_column=Column(String(32), nullable=False))
    prompt_id: str = Field(sa_column=ulid_col())
    activation_id: str = Field(sa_column=ulid_col())
    round: int = Field(sa_column=Column(Integer, nullable=False))
    seq: int
    provider_call_id: str
    name: str
    arguments: dict[str, Any] = Field(default_factory=dict, sa_column=Column(JSONB, nullable=False))
    raw_arguments: str | None = Field(default=None, sa_column=Column(Text, nullable=True))
    result: str | None = Field(default=None, sa_column=Column(Text, nullable=True))
    is_error: bool = False
    created_at: datetime = Field(sa_column=tstz())
    finished_at: datetime | None = Field(default=None, sa_column=tstz(nullable=True))


class PromptExtensionRow(SQLModel, table=True):
    """A message appended to a stored prompt by the tool loop, at a fixed position."""

    __tablename__ = "prompt_extensions"

    prompt_id: str = Field(sa_column=Column(String(26), primary_key=True))
    position: int = Field(sa_column=Column(Integer, primary_key=True))
    message: dict[str, Any] = Field(sa_column=Column(JSONB, nullable=False))
    created_at: datetime = Field(sa_column=tstz())
