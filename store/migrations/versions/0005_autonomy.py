"""Autonomy: reminders, the heartbeat's durable record, goals, quick facts, the log of
self-initiated activations, and the tool loop's stored calls and message extensions.

``heartbeats`` holds one row per agent from the moment its heartbeat is bootstrapped; a row in
state ``deleted`` is what keeps a restart or redeploy from resurrecting it. ``reminders`` is the
agent's intent; its Temporal Schedule (``reminder/{id}``) exists only while it is ``active``.
``tool_calls`` and ``prompt_extensions`` keep the tool loop's arguments, results and growing
message list out of workflow history.

Revision ID: 0005
Revises: 0002
"""

from alembic import op

revision = "0005"
down_revision = "0002"
branch_labels = None
depends_on = None

UPGRADE = """
CREATE TABLE heartbeats (
    agent VARCHAR(32) PRIMARY KEY REFERENCES agents (handle) ON DELETE CASCADE,
    state VARCHAR NOT NULL,
    interval_minutes DOUBLE PRECISION NOT NULL,
    task_queue VARCHAR NOT NULL,
    bootstrapped_at TIMESTAMPTZ NOT NULL,
    deleted_at TIMESTAMPTZ,
    restored_at TIMESTAMPTZ,
    updated_at TIMESTAMPTZ NOT NULL
);

CREATE TABLE reminders (
    id VARCHAR(26) PRIMARY KEY,
    agent VARCHAR(32) NOT NULL REFERENCES agents (handle) ON DELETE CASCADE,
    objective TEXT NOT NULL,
    kind VARCHAR NOT NULL,
    status VARCHAR NOT NULL,
    at TIMESTAMPTZ,
    every_minutes DOUBLE PRECISION,
    cron VARCHAR,
    timezone VARCHAR NOT NULL,
    task_queue VARCHAR NOT NULL,
    created_in VARCHAR(26),
    fired INTEGER NOT NULL DEFAULT 0,
    last_fired_at TIMESTAMPTZ,
    created_at TIMESTAMPTZ NOT NULL,
    updated_at TIMESTAMPTZ NOT NULL
);
CREATE INDEX ix_reminders_agent_status ON reminders (agent, status);

CREATE TABLE goals (
    id VARCHAR(26) PRIMARY KEY,
    agent VARCHAR(32) NOT NULL REFERENCES agents (handle) ON DELETE CASCADE,
    description TEXT NOT NULL,
    status VARCHAR NOT NULL,
    note TEXT,
    created_in VARCHAR(26),
    created_at TIMESTAMPTZ NOT NULL,
    updated_at TIMESTAMPTZ NOT NULL,
    closed_at TIMESTAMPTZ
);
CREATE INDEX ix_goals_agent_status ON goals (agent, status);

CREATE TABLE quick_facts (
    id VARCHAR(26) PRIMARY KEY,
    agent VARCHAR(32) NOT NULL REFERENCES agents (handle) ON DELETE CASCADE,
    subject VARCHAR NOT NULL,
    key VARCHAR NOT NULL,
    value TEXT NOT NULL,
    updated_at TIMESTAMPTZ NOT NULL,
    CONSTRAINT uq_quick_fact UNIQUE (agent, subject, key)
);

CREATE TABLE autonomy_log (
    event_id VARCHAR(26) PRIMARY KEY,
    agent VARCHAR(32) NOT NULL REFERENCES agents (handle) ON DELETE CASCADE,
    kind VARCHAR NOT NULL,
    reminder_id VARCHAR(26),
    objective TEXT,
    delivered BOOLEAN NOT NULL,
    reason VARCHAR,
    assessment TEXT,
    template VARCHAR,
    fired_at TIMESTAMPTZ NOT NULL
);
CREATE INDEX ix_autonomy_log_agent_at ON autonomy_log (agent, fired_at);

CREATE TABLE tool_calls (
    id VARCHAR(26) PRIMARY KEY,
    agent VARCHAR(32) NOT NULL,
    prompt_id VARCHAR(26) NOT NULL,
    activation_id VARCHAR(26) NOT NULL,
    round INTEGER NOT NULL,
    seq INTEGER NOT NULL,
    provider_call_id VARCHAR NOT NULL,
    name VARCHAR NOT NULL,
    arguments JSONB NOT NULL,
    raw_arguments TEXT,
    result TEXT,
    is_error BOOLEAN NOT NULL DEFAULT false,
    created_at TIMESTAMPTZ NOT NULL,
    finished_at TIMESTAMPTZ
);
CREATE INDEX ix_tool_calls_activation ON tool_calls (activation_id);
CREATE INDEX ix_tool_calls_prompt_round ON tool_calls (prompt_id, round, seq);
CREATE INDEX ix_tool_calls_agent_at ON tool_calls (agent, created_at);

CREATE TABLE prompt_extensions (
    prompt_id VARCHAR(26) NOT NULL,
    position INTEGER NOT NULL,
    message JSONB NOT NULL,
    created_at TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (prompt_id, position)
);
"""

DROPS = """
DROP TABLE IF EXISTS prompt_extensions, tool_calls, autonomy_log, quick_facts, goals, reminders,
    heartbeats CASCADE;
"""


def upgrade() -> None:
    op.execute(UPGRADE)


def downgrade() -> None:
    op.execute(DROPS)
