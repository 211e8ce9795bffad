"""Deliberation: conclusions parked for the next turn on a channel, and every decision to speak.

``parked_conclusions`` is keyed by agent and channel (not conversation) so a deferred critique's
conclusion survives the conversation closing; a partial index finds the ones still waiting.
``speak_decisions`` records, per activation, whether the agent spoke, why, on what basis (rule,
guardrail, model, fallback) and how the reply was deliberated.

Revision ID: 0004
Revises: 0002
"""

from alembic import op

revision = "0004"
down_revision = "0002"
branch_labels = None
depends_on = None

UPGRADE = """
CREATE TABLE parked_conclusions (
    id VARCHAR(26) PRIMARY KEY,
    agent VARCHAR(32) NOT NULL REFERENCES agents (handle) ON DELETE CASCADE,
    channel_key VARCHAR NOT NULL,
    activation_id VARCHAR(26) NOT NULL UNIQUE,
    conversation_id VARCHAR(26) NOT NULL,
    candidate TEXT NOT NULL,
    objections JSONB NOT NULL,
    refined TEXT,
    created_at TIMESTAMPTZ NOT NULL,
    expires_at TIMESTAMPTZ NOT NULL,
    consumed_at TIMESTAMPTZ,
    consumed_by VARCHAR(26)
);
CREATE INDEX ix_parked_conclusions_waiting ON parked_conclusions (agent, channel_key, created_at)
    WHERE consumed_at IS NULL;

CREATE TABLE speak_decisions (
    activation_id VARCHAR(26) PRIMARY KEY,
    agent VARCHAR(32) NOT NULL REFERENCES agents (handle) ON DELETE CASCADE,
    event_id VARCHAR(26) NOT NULL,
    channel_key VARCHAR NOT NULL,
    speak BOOLEAN NOT NULL,
    reason TEXT NOT NULL,
    basis VARCHAR NOT NULL,
    transmitted BOOLEAN NOT NULL,
    mode VARCHAR,
    lenses VARCHAR[] NOT NULL DEFAULT '{}',
    objections INTEGER NOT NULL DEFAULT 0,
    refined BOOLEAN NOT NULL DEFAULT false,
    decided_at TIMESTAMPTZ NOT NULL
);
CREATE INDEX ix_speak_decisions_event_id ON speak_decisions (event_id);
CREATE INDEX ix_speak_decisions_agent_at ON speak_decisions (agent, decided_at);
"""

DOWNGRADE = """
DROP TABLE IF EXISTS speak_decisions;
DROP TABLE IF EXISTS parked_conclusions;
"""


def upgrade() -> None:
    op.execute(UPGRADE)


def downgrade() -> None:
    op.execute(DOWNGRADE)
