"""Dial intents: each call ``place_call`` means to place, written before the transport dials.

The key is the tool call's ID, which a retried attempt keeps. A retry finds the row: with the
transport's call ID it returns that call; still ``dialing`` it asks the transport whether a call
carrying the key was placed before it dials again (docs/channels.md, "Placing a call").

Revision ID: 0022_dial_intents
Revises: 0021_workspaces
"""

from alembic import op

revision = "0022_dial_intents"
down_revision = "0021_workspaces"
branch_labels = None
depends_on = None


def upgrade() -> None:
    """Create the dial intents."""
    op.execute(
        """
        CREATE TABLE dial_intents (
            id varchar(26) PRIMARY KEY,
            agent varchar(32) NOT NULL REFERENCES agents(handle) ON DELETE CASCADE,
            person_id varchar(26) NOT NULL,
            number text NOT NULL,
            status varchar(16) NOT NULL CHECK (status IN ('dialing', 'placed', 'failed')),
            call_id varchar(128),
            call_status varchar(64),
            error text,
            created_at timestamptz NOT NULL,
            settled_at timestamptz
        )
        """
    )
    op.execute("CREATE INDEX ix_dial_intents_agent ON dial_intents (agent, created_at)")


def downgrade() -> None:
    """Drop them."""
    op.execute("DROP TABLE dial_intents")
