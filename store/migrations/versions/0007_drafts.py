"""Reply drafts: the candidate reply stored once, so workflow history carries its ID only.

The response model's answer used to travel as text through the activation's history: in the
generation's result and in the inputs of the steps after it (judge, critics, refine, the
deferred deliberation). It is now written to ``drafts`` by the generation activity, and each
step loads it by ID. Retention deletes an agent's drafts with its old dialog; forgetting a
memory redacts it here too.

Revision ID: 0007_drafts
Revises: 0007_erasure
"""

from alembic import op

revision = "0007_drafts"
down_revision = "0007_erasure"
branch_labels = None
depends_on = None


def upgrade() -> None:
    """Create the drafts table."""
    op.execute(
        """
        CREATE TABLE drafts (
            id varchar(26) PRIMARY KEY,
            agent varchar(32) NOT NULL,
            activation_id varchar(26),
            text text NOT NULL,
            created_at timestamptz NOT NULL
        )
        """
    )
    op.execute("CREATE INDEX ix_drafts_agent_created ON drafts (agent, created_at)")


def downgrade() -> None:
    """Drop the drafts table."""
    op.execute("DROP TABLE drafts")
