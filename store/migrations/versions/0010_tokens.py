"""Web channel tokens: one bearer token per integrator, kept as its SHA-256 only.

``agents`` limits a token to those handles (empty: every agent). A revoked token keeps its row.

Revision ID: 0010_tokens
Revises: 0009_observation_briefs
"""

from alembic import op

revision = "0010_tokens"
down_revision = "0009_observation_briefs"
branch_labels = None
depends_on = None


def upgrade() -> None:
    """Create the tokens table."""
    op.execute(
        """
        CREATE TABLE web_tokens (
            id varchar(26) PRIMARY KEY,
            name varchar(64) NOT NULL,
            token_hash varchar(64) NOT NULL UNIQUE,
            agents varchar[] NOT NULL DEFAULT '{}',
            created_at timestamptz NOT NULL,
            revoked_at timestamptz
        )
        """
    )


def downgrade() -> None:
    """Drop the tokens table."""
    op.execute("DROP TABLE web_tokens")
