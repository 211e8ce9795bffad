"""Observation briefs: the dossier on a subject, kept until the subject's facts change.

``fingerprint`` names the set of active observations the brief was written from; when it no
longer matches, the brief is written again. ``subject`` is a person's ID, or ``self`` for
the agent itself.

Revision ID: 0009_observation_briefs
Revises: 0008_observations
"""

from alembic import op

revision = "0009_observation_briefs"
down_revision = "0008_observations"
branch_labels = None
depends_on = None


def upgrade() -> None:
    """Create the briefs table."""
    op.execute(
        """
        CREATE TABLE observation_briefs (
            agent varchar(32) NOT NULL REFERENCES agents(handle) ON DELETE CASCADE,
            subject varchar(26) NOT NULL,
            fingerprint varchar(64) NOT NULL,
            brief text NOT NULL,
            written_at timestamptz NOT NULL,
            PRIMARY KEY (agent, subject)
        )
        """
    )


def downgrade() -> None:
    """Drop the briefs table."""
    op.execute("DROP TABLE observation_briefs")
