"""Payload codec: per-agent data keys, wrapped by the deployment's master key.

``scope`` is the agent's handle, or ``*`` for the deployment's shared key; at most one key per
scope is active. A shredded key keeps its row (who, when) without its key material. Deleting an
agent deletes its keys.

Revision ID: 0007_codec
Revises: 0002
"""

from alembic import op

revision = "0007_codec"
down_revision = "0002"
branch_labels = None
depends_on = None

UPGRADE = """
CREATE TABLE codec_keys (
    id VARCHAR(26) PRIMARY KEY,
    scope VARCHAR(32) NOT NULL,
    agent VARCHAR(32) REFERENCES agents (handle) ON DELETE CASCADE,
    wrapped_key BYTEA,
    created_at TIMESTAMPTZ NOT NULL,
    shredded_at TIMESTAMPTZ
);
CREATE UNIQUE INDEX uq_codec_keys_active_scope ON codec_keys (scope) WHERE shredded_at IS NULL;
CREATE INDEX ix_codec_keys_agent ON codec_keys (agent);
"""


def upgrade() -> None:
    op.execute(UPGRADE)


def downgrade() -> None:
    op.execute("DROP TABLE codec_keys")
