"""Memory formation, culling and withdrawal.

- ``memory_records`` learns what each record was formed from: ``derived_from`` (the earlier
  memories that were in its consolidation prompt, so withdrawing one can say what derived from
  it), the moments of its first and last turn (``turn_first_at``/``turn_last_at``: "earlier" in
  the as-of rule means earlier in the dialog, whatever order IDs were minted in), the rubric
  scores behind its rating and the emotion distribution behind its tag.
- ``memory_formations``: one row per range of turns on its way to becoming a record; the working
  state of a consolidation (draft summary, rating, classification) lives here, so workflow
  history carries IDs only and a failed range waits here for the next consolidation to retry.
- ``memory_audit``: who withdrew which record (forget, cull), when, why, and what it said.

Revision ID: 0003
Revises: 0002
"""

from alembic import op

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None

UPGRADE = """
ALTER TABLE memory_records
    ADD COLUMN IF NOT EXISTS derived_from VARCHAR(26)[] NOT NULL DEFAULT '{}',
    ADD COLUMN IF NOT EXISTS turn_first_at TIMESTAMPTZ,
    ADD COLUMN IF NOT EXISTS turn_last_at TIMESTAMPTZ,
    ADD COLUMN IF NOT EXISTS rubric JSONB,
    ADD COLUMN IF NOT EXISTS emotions JSONB;
CREATE INDEX IF NOT EXISTS ix_memory_derived_from ON memory_records USING gin (derived_from);
CREATE INDEX IF NOT EXISTS ix_memory_cull ON memory_records (agent, importance, created_at);
CREATE INDEX IF NOT EXISTS ix_memory_unembedded ON memory_records (agent, id)
    WHERE embedding IS NULL AND forgotten_at IS NULL;

CREATE TABLE memory_formations (
    id VARCHAR(26) PRIMARY KEY,
    agent VARCHAR(32) NOT NULL REFERENCES agents (handle) ON DELETE CASCADE,
    conversation_id VARCHAR(26) NOT NULL,
    channel_id VARCHAR(26) NOT NULL,
    after_turn VARCHAR(26),
    through_turn VARCHAR(26) NOT NULL,
    turn_first VARCHAR(26),
    turn_last VARCHAR(26),
    turn_first_at TIMESTAMPTZ,
    turn_last_at TIMESTAMPTZ,
    turns INTEGER NOT NULL DEFAULT 0,
    status VARCHAR NOT NULL,
    claimed_by VARCHAR(26),
    attempts INTEGER NOT NULL DEFAULT 1,
    summary TEXT,
    derived_from VARCHAR(26)[] NOT NULL DEFAULT '{}',
    participants VARCHAR[] NOT NULL DEFAULT '{}',
    importance SMALLINT,
    rubric JSONB,
    emotions JSONB,
    emotion VARCHAR,
    sensitivity VARCHAR,
    tags VARCHAR[],
    record_id VARCHAR(26),
    error TEXT,
    created_at TIMESTAMPTZ NOT NULL,
    updated_at TIMESTAMPTZ NOT NULL,
    CONSTRAINT uq_memory_formations_range UNIQUE (conversation_id, through_turn)
);
CREATE INDEX ix_memory_formations_agent_status
    ON memory_formations (agent, status, turn_first_at);

CREATE TABLE memory_audit (
    id VARCHAR(26) PRIMARY KEY,
    agent VARCHAR(32) NOT NULL,
    record_id VARCHAR(26) NOT NULL,
    action VARCHAR NOT NULL,
    actor VARCHAR NOT NULL,
    reason TEXT,
    summary TEXT NOT NULL,
    snapshot JSONB NOT NULL DEFAULT '{}',
    derived VARCHAR(26)[] NOT NULL DEFAULT '{}',
    at TIMESTAMPTZ NOT NULL
);
CREATE INDEX ix_memory_audit_record ON memory_audit (record_id);
CREATE INDEX ix_memory_audit_agent_at ON memory_audit (agent, at);
"""

DOWNGRADE = """
DROP TABLE IF EXISTS memory_audit, memory_formations;
DROP INDEX IF EXISTS ix_memory_unembedded;
DROP INDEX IF EXISTS ix_memory_cull;
DROP INDEX IF EXISTS ix_memory_derived_from;
ALTER TABLE memory_records
    DROP COLUMN IF EXISTS emotions,
    DROP COLUMN IF EXISTS rubric,
    DROP COLUMN IF EXISTS turn_last_at,
    DROP COLUMN IF EXISTS turn_first_at,
    DROP COLUMN IF EXISTS derived_from;
"""


def upgrade() -> None:
    op.execute(UPGRADE)


def downgrade() -> None:
    op.execute(DOWNGRADE)
