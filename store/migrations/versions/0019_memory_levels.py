"""Memory levels: records fold into recollections (L1 into L2, L2 into L3).

A record gains its ``level`` (1 for a memory formed from dialog) and ``folded_into``, the
recollection it was folded into (the link up; the link down is the recollection's
``derived_from``). A recollection deleted by a cull leaves its records unfolded. The partial
index serves the folding plan: the live, unfolded records of an agent by level.

Revision ID: 0019_memory_levels
Revises: 0018_goal_split
"""

from alembic import op

revision = "0019_memory_levels"
down_revision = "0018_goal_split"
branch_labels = None
depends_on = None


def upgrade() -> None:
    """Add the level and the link up, and index what is still to fold."""
    op.execute(
        """
        ALTER TABLE memory_records
            ADD COLUMN level smallint NOT NULL DEFAULT 1 CHECK (level BETWEEN 1 AND 9),
            ADD COLUMN folded_into varchar(26)
                REFERENCES memory_records (id) ON DELETE SET NULL
        """
    )
    op.execute(
        "CREATE INDEX ix_memory_unfolded ON memory_records (agent, level, created_at) "
        "WHERE folded_into IS NULL AND forgotten_at IS NULL"
    )
    op.execute("CREATE INDEX ix_memory_folded_into ON memory_records (folded_into)")


def downgrade() -> None:
    """Drop the levels (recollections stay as plain records)."""
    op.execute("DROP INDEX IF EXISTS ix_memory_folded_into")
    op.execute("DROP INDEX IF EXISTS ix_memory_unfolded")
    op.execute("ALTER TABLE memory_records DROP COLUMN folded_into, DROP COLUMN level")
