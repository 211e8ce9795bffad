"""Emotional state: one reading per exchange, per agent and conversation (spec §4.9).

The current state is not stored: it is the newest reading decayed toward the baseline by its
age, computed when read.

Revision ID: 0010_emotion
Revises: 0009_observation_briefs
"""

from alembic import op

revision = "0010_emotion"
down_revision = "0009_observation_briefs"
branch_labels = None
depends_on = None


def upgrade() -> None:
    """Create the readings table."""
    op.execute(
        """
        CREATE TABLE emotion_readings (
            id varchar(26) PRIMARY KEY,
            agent varchar(32) NOT NULL REFERENCES agents(handle) ON DELETE CASCADE,
            conversation_id varchar(26) NOT NULL,
            channel_key varchar NOT NULL,
            activation_id varchar(26) NOT NULL UNIQUE,
            at timestamptz NOT NULL,
            top varchar(16) NOT NULL,
            probability double precision NOT NULL,
            distribution jsonb NOT NULL
        )
        """
    )
    op.execute("CREATE INDEX ix_emotion_readings_agent_at ON emotion_readings (agent, at)")
    op.execute(
        "CREATE INDEX ix_emotion_readings_conversation_at ON emotion_readings (conversation_id, at)"
    )


def downgrade() -> None:
    """Drop the readings table."""
    op.execute("DROP TABLE emotion_readings")
