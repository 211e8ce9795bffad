"""Observations: facts about people (and the agent itself) with trust labels and a supersede chain.

- ``person_id`` empty means the subject is the agent itself;
- ``trust`` says where the fact came from (self, told, inferred, operator);
- ``status`` is active or superseded; ``supersedes`` links a record to the one it replaced,
  and superseded rows are never deleted;
- ``embedding vector(N)`` (N from settings, as in 0001) with an HNSW index for cosine distance,
  so reconciliation finds the most similar active facts of a subject.

Revision ID: 0008_observations
Revises: 0006
"""

from alembic import context, op

revision = "0008_observations"
down_revision = "0006"
branch_labels = None
depends_on = None

UPGRADE = """
CREATE TABLE observations (
    id varchar(26) PRIMARY KEY,
    agent varchar(32) NOT NULL REFERENCES agents(handle) ON DELETE CASCADE,
    person_id varchar(26) REFERENCES people(id) ON DELETE CASCADE,
    type varchar(64) NOT NULL,
    value text NOT NULL,
    observed_at timestamptz NOT NULL,
    conversation_id varchar(26),
    turn_first varchar(26),
    turn_last varchar(26),
    trust varchar(16) NOT NULL
        CONSTRAINT ck_observations_trust CHECK (trust IN ('self', 'told', 'inferred', 'operator')),
    status varchar(16) NOT NULL DEFAULT 'active'
        CONSTRAINT ck_observations_status CHECK (status IN ('active', 'superseded')),
    supersedes varchar(26) REFERENCES observations(id),
    superseded_at timestamptz,
    reason text,
    embedding vector({dimensions}),
    created_at timestamptz NOT NULL
);
CREATE INDEX ix_observations_subject ON observations (agent, person_id, status);
CREATE INDEX ix_observations_supersedes ON observations (supersedes);
CREATE INDEX ix_observations_embedding ON observations
    USING hnsw (embedding vector_cosine_ops) WITH (m = 16, ef_construction = 64);
"""


def upgrade() -> None:
    """Create the observations table, its vector sized from the configured encoder."""
    dimensions = int(context.config.attributes.get("embedding_dimensions", 384))
    op.execute(UPGRADE.replace("{dimensions}", str(dimensions)))


def downgrade() -> None:
    """Drop the observations table."""
    op.execute("DROP TABLE observations")
