"""Goals split: constitutional fields the operator owns, operational ones the agent keeps.

A goal gains its title, kind (goal or interest), progress signal and who set it; and the
agent's own state, next step, last step (and when), what blocks it and when it last moved.
A change to a constitutional field the agent asks for is a row of ``goal_requests``.

Revision ID: 0018_goal_split
Revises: 0017_residue
"""

from alembic import op

revision = "0018_goal_split"
down_revision = "0017_residue"
branch_labels = None
depends_on = None


def upgrade() -> None:
    """Add the fields and the requests; a goal's last move starts at its last update."""
    op.execute(
        """
        ALTER TABLE goals
            ADD COLUMN title text,
            ADD COLUMN kind varchar(16) NOT NULL DEFAULT 'goal'
                CHECK (kind IN ('goal', 'interest')),
            ADD COLUMN progress_signal text,
            ADD COLUMN set_by varchar(16) NOT NULL DEFAULT 'agent',
            ADD COLUMN state text,
            ADD COLUMN next_step text,
            ADD COLUMN last_step text,
            ADD COLUMN last_step_at timestamptz,
            ADD COLUMN blocked_by text,
            ADD COLUMN moved_at timestamptz
        """
    )
    op.execute("UPDATE goals SET moved_at = updated_at")
    op.execute(
        """
        CREATE TABLE goal_requests (
            id varchar(26) PRIMARY KEY,
            agent varchar(32) NOT NULL REFERENCES agents(handle) ON DELETE CASCADE,
            goal_id varchar(26) NOT NULL REFERENCES goals(id) ON DELETE CASCADE,
            field varchar(32) NOT NULL,
            value text NOT NULL,
            reason text,
            status varchar(16) NOT NULL,
            asked_in varchar(26),
            created_at timestamptz NOT NULL,
            decided_at timestamptz,
            decided_by text
        )
        """
    )
    op.execute("CREATE INDEX ix_goal_requests_agent_status ON goal_requests (agent, status)")


def downgrade() -> None:
    """Drop the requests and the new fields."""
    op.execute("DROP TABLE goal_requests")
    op.execute(
        "ALTER TABLE goals DROP COLUMN title, DROP COLUMN kind, DROP COLUMN progress_signal, "
        "DROP COLUMN set_by, DROP COLUMN state, DROP COLUMN next_step, DROP COLUMN last_step, "
        "DROP COLUMN last_step_at, DROP COLUMN blocked_by, DROP COLUMN moved_at"
    )
