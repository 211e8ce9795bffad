"""A reminder may be for a person: when it fires, they are sent it on the channel they asked in.

A reminder the platform sets from a person's words ("remind me to call mum in 10 minutes")
names the person and the channel; one the agent sets with its own tool names neither, and
wakes only the agent, as before.

Revision ID: 0015_reminder_for_person
Revises: 0014_outbox_event
"""

from alembic import op

revision = "0015_reminder_for_person"
down_revision = "0014_outbox_event"
branch_labels = None
depends_on = None


def upgrade() -> None:
    """Add the person and the channel the reminder is sent to."""
    op.execute("ALTER TABLE reminders ADD COLUMN for_person varchar(26)")
    op.execute("ALTER TABLE reminders ADD COLUMN for_channel text")


def downgrade() -> None:
    """Drop them: every reminder wakes only the agent again."""
    op.execute("ALTER TABLE reminders DROP COLUMN for_channel")
    op.execute("ALTER TABLE reminders DROP COLUMN for_person")
