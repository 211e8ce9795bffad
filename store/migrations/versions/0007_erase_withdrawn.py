"""Withdrawn memories keep no text: the audit trail holds who, when and why only.

Forgetting or culling a memory used to copy its summary into ``memory_audit`` and leave it in
the forgotten record and its formation draft. From now on a withdrawal erases the text
(``store.queries.erasure``); this revision makes the audit's ``summary`` optional and empties
what earlier withdrawals left behind. Copies inside stored prompts made before this revision
age out with dialog retention.

Revision ID: 0007_erasure
Revises: 0003
"""

import sqlalchemy as sa
from alembic import op

revision = "0007_erasure"
down_revision = "0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    """Make the audit text optional and erase what withdrawals kept."""
    op.alter_column("memory_audit", "summary", existing_type=sa.Text(), nullable=True)
    op.execute("UPDATE memory_audit SET summary = NULL")
    op.execute("UPDATE memory_records SET summary = '' WHERE forgotten_at IS NOT NULL")
    op.execute(
        "UPDATE memory_formations f SET summary = NULL WHERE f.record_id IS NOT NULL AND "
        "NOT EXISTS (SELECT 1 FROM memory_records m "
        "WHERE m.id = f.record_id AND m.forgotten_at IS NULL)"
    )


def downgrade() -> None:
    """The erased text cannot come back; the column takes an empty text again."""
    op.execute("UPDATE memory_audit SET summary = '' WHERE summary IS NULL")
    op.alter_column("memory_audit", "summary", existing_type=sa.Text(), nullable=False)
