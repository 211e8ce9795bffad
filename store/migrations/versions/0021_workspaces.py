"""Shared workspaces: a volume several agents' sandboxes mount, its members, its change log.

A member row says how the agent mounts it (``rw`` or ``ro``); the change log says which agent's
sandbox changed which file, when, and by how much. The log keeps the agent's handle as text:
who wrote what stays readable after the author is removed.

Revision ID: 0021_workspaces
Revises: 0020_tool_approvals
"""

from alembic import op

revision = "0021_workspaces"
down_revision = "0020_tool_approvals"
branch_labels = None
depends_on = None


def upgrade() -> None:
    """Create the workspaces, their members and their change log."""
    op.execute(
        """
        CREATE TABLE workspaces (
            name varchar(32) PRIMARY KEY,
            volume text NOT NULL,
            created_by text NOT NULL,
            created_at timestamptz NOT NULL
        )
        """
    )
    op.execute(
        """
        CREATE TABLE workspace_members (
            workspace varchar(32) NOT NULL REFERENCES workspaces(name) ON DELETE CASCADE,
            agent varchar(32) NOT NULL REFERENCES agents(handle) ON DELETE CASCADE,
            mode varchar(2) NOT NULL CHECK (mode IN ('rw', 'ro')),
            added_by text NOT NULL,
            added_at timestamptz NOT NULL,
            PRIMARY KEY (workspace, agent)
        )
        """
    )
    op.execute("CREATE INDEX ix_workspace_members_agent ON workspace_members (agent)")
    op.execute(
        """
        CREATE TABLE workspace_changes (
            id varchar(26) PRIMARY KEY,
            workspace varchar(32) NOT NULL REFERENCES workspaces(name) ON DELETE CASCADE,
            agent varchar(32) NOT NULL,
            path text NOT NULL,
            kind varchar(16) NOT NULL CHECK (kind IN ('added', 'modified', 'deleted')),
            bytes_before bigint NOT NULL,
            bytes_after bigint NOT NULL,
            lines_added integer NOT NULL,
            lines_removed integer NOT NULL,
            excerpt text NOT NULL,
            task_id varchar(26),
            at timestamptz NOT NULL
        )
        """
    )
    op.execute("CREATE INDEX ix_workspace_changes_at ON workspace_changes (workspace, at)")


def downgrade() -> None:
    """Drop them."""
    op.execute("DROP TABLE workspace_changes")
    op.execute("DROP TABLE workspace_members")
    op.execute("DROP TABLE workspaces")
