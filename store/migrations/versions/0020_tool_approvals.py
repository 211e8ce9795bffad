"""Tool approvals: a tool call that waits for a person's yes, and the decision (who, when, why).

Revision ID: 0020_tool_approvals
Revises: 0019_memory_levels
"""

from alembic import op

revision = "0020_tool_approvals"
down_revision = "0019_memory_levels"
branch_labels = None
depends_on = None


def upgrade() -> None:
    """Create the approvals."""
    op.execute(
        """
        CREATE TABLE tool_approvals (
            id varchar(26) PRIMARY KEY,
            agent varchar(32) NOT NULL REFERENCES agents(handle) ON DELETE CASCADE,
            activation_id varchar(26) NOT NULL,
            call_id varchar(26) NOT NULL,
            tool text NOT NULL,
            arguments text NOT NULL,
            reason text NOT NULL,
            asked_by text NOT NULL,
            channel text NOT NULL,
            created_at timestamptz NOT NULL,
            deadline timestamptz NOT NULL,
            status varchar(16) NOT NULL,
            decided_by text,
            decided_at timestamptz,
            why text
        )
        """
    )
    op.execute(
        "CREATE INDEX ix_tool_approvals_agent_status ON tool_approvals (agent, status, created_at)"
    )
    op.execute("CREATE INDEX ix_tool_approvals_call_id ON tool_approvals (call_id)")


def downgrade() -> None:
    """Drop the approvals."""
    op.execute("DROP TABLE tool_approvals")
