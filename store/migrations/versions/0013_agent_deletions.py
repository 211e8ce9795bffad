"""Agent deletions: the audit of each deleted agent (who, when, rows erased per table).

``persyn agent delete`` erases every row that belongs to an agent and keeps only its usage
totals (``usage_daily``) and this entry, which has no foreign key so it outlives the agent.

Revision ID: 0013_agent_deletions
Revises: 0012_web_tenants
"""

from alembic import op

revision = "0013_agent_deletions"
down_revision = "0012_web_tenants"
branch_labels = None
depends_on = None


def upgrade() -> None:
    """Create the deletion audit."""
    op.execute(
        """
        CREATE TABLE agent_deletions (
            id varchar(26) PRIMARY KEY,
            agent varchar(32) NOT NULL,
            deleted_by varchar(200) NOT NULL,
            deleted_at timestamptz NOT NULL,
            erased jsonb NOT NULL DEFAULT '{}',
            keys_shredded integer NOT NULL
        )
        """
    )
    op.execute("CREATE INDEX ix_agent_deletions_agent ON agent_deletions (agent)")


def downgrade() -> None:
    """Drop the deletion audit."""
    op.execute("DROP TABLE agent_deletions")
