"""The outbox names the event each reply answers, so a client can match a reply to its request.

A reply's row carries its inbound event's ID (unprompted messages answer none and have none).
The web channel's stream puts it on every ``reply`` event, and a reader resuming with the ID of
an event it posted gets that event's reply and everything after it. Rows written before this
revision keep no event ID.

Revision ID: 0014_outbox_event
Revises: 0013_agent_deletions
"""

from alembic import op

revision = "0014_outbox_event"
down_revision = "0013_agent_deletions"
branch_labels = None
depends_on = None


def upgrade() -> None:
    """Add the event column and the index a resume by event looks it up with."""
    op.execute("ALTER TABLE outbox ADD COLUMN event_id varchar(26)")
    op.execute("CREATE INDEX ix_outbox_event ON outbox (agent, event_id)")


def downgrade() -> None:
    """Drop the event column (and its index with it)."""
    op.execute("ALTER TABLE outbox DROP COLUMN event_id")
