"""Residue: what recent conversations on a channel left behind, at most seven live items.

Revision ID: 0017_residue
Revises: 0016_notes
"""

from alembic import op

revision = "0017_residue"
down_revision = "0016_notes"
branch_labels = None
depends_on = None


def upgrade() -> None:
    """Create the residue items."""
    op.execute(
        """
        CREATE TABLE residue_items (
            id varchar(26) PRIMARY KEY,
            agent varchar(32) NOT NULL REFERENCES agents(handle) ON DELETE CASCADE,
            channel_id varchar(26) NOT NULL,
            text text NOT NULL,
            since timestamptz NOT NULL,
            last_carried_at timestamptz NOT NULL,
            carried integer NOT NULL DEFAULT 0,
            conversation_id varchar(26) NOT NULL,
            run_id varchar(26) NOT NULL,
            retired_at timestamptz
        )
        """
    )
    op.execute(
        "CREATE INDEX ix_residue_items_channel "
        "ON residue_items (agent, channel_id, last_carried_at)"
    )
    op.execute("CREATE INDEX ix_residue_items_run_id ON residue_items (run_id)")


def downgrade() -> None:
    """Drop the residue items."""
    op.execute("DROP TABLE residue_items")
