"""Notes: durable text about the agent, a person or a channel, some pinned in every prompt.

A note is written once; a later one replaces it through ``supersedes``. The partial unique index
gives each note at most one successor, so the history of a note is a chain, never a tree.

Revision ID: 0016_notes
Revises: 0015_reminder_for_person
"""

from alembic import op

revision = "0016_notes"
down_revision = "0015_reminder_for_person"
branch_labels = None
depends_on = None


def upgrade() -> None:
    """Create the notes table."""
    op.execute(
        """
        CREATE TABLE notes (
            id varchar(26) PRIMARY KEY,
            agent varchar(32) NOT NULL REFERENCES agents(handle) ON DELETE CASCADE,
            scope varchar(16) NOT NULL CHECK (scope IN ('agent', 'person', 'channel')),
            scope_id text NOT NULL,
            text text NOT NULL,
            pinned boolean NOT NULL,
            source varchar(16) NOT NULL,
            written_by text NOT NULL,
            activation_id varchar(26),
            supersedes varchar(26) REFERENCES notes(id) ON DELETE SET NULL,
            created_at timestamptz NOT NULL,
            CHECK (supersedes IS NULL OR supersedes <> id)
        )
        """
    )
    op.execute("CREATE INDEX ix_notes_scope ON notes (agent, scope, scope_id)")
    op.execute(
        "CREATE UNIQUE INDEX uq_notes_one_successor ON notes (supersedes) "
        "WHERE supersedes IS NOT NULL"
    )


def downgrade() -> None:
    """Drop the notes table."""
    op.execute("DROP TABLE notes")
