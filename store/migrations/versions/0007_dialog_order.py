"""Dialog order: a sequence the server assigns on arrival, not the client's event ID.

A person's turn ID is the client's event ULID, whose time part the client sets, so ordering
dialog by ID let a client move its message before or after others (and pair messages with the
wrong replies). ``seq`` comes from a PostgreSQL sequence when the turn is written: the
conversation writes its turns one after another, so ``seq`` is the order they arrived in.
The event ID stays the turn's key, for idempotency only.

Existing turns are numbered by when the server recorded them (``at``, then ID).

Revision ID: 0007_order
Revises: 0002
"""

from alembic import op

revision = "0007_order"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.execute("ALTER TABLE dialog_turns ADD COLUMN seq bigint")
    op.execute("CREATE SEQUENCE dialog_turns_seq_seq OWNED BY dialog_turns.seq")
    op.execute(
        "UPDATE dialog_turns AS d SET seq = o.n FROM "
        "(SELECT id, row_number() OVER (ORDER BY at, id) AS n FROM dialog_turns) AS o "
        "WHERE d.id = o.id"
    )
    op.execute(
        "SELECT setval('dialog_turns_seq_seq', "
        "coalesce((SELECT max(seq) FROM dialog_turns), 0) + 1, false)"
    )
    op.execute(
        "ALTER TABLE dialog_turns ALTER COLUMN seq SET DEFAULT nextval('dialog_turns_seq_seq'), "
        "ALTER COLUMN seq SET NOT NULL"
    )
    op.execute(
        "CREATE UNIQUE INDEX ix_dialog_turns_conversation_seq "
        "ON dialog_turns (conversation_id, seq)"
    )


def downgrade() -> None:
    op.execute("DROP INDEX IF EXISTS ix_dialog_turns_conversation_seq")
    op.execute("ALTER TABLE dialog_turns DROP COLUMN seq")
