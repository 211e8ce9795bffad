"""The Telegram channel: the poller's durable offset, inbound message IDs, sent parts.

Revision ID: 0010_telegram
Revises: 0009_observation_briefs
"""

from alembic import op

revision = "0010_telegram"
down_revision = "0009_observation_briefs"
branch_labels = None
depends_on = None


def upgrade() -> None:
    """Create the three tables."""
    op.execute(
        """
        CREATE TABLE telegram_offsets (
            bot_id bigint PRIMARY KEY,
            next_offset bigint NOT NULL,
            updated_at timestamptz NOT NULL
        )
        """
    )
    op.execute(
        """
        CREATE TABLE telegram_inbound (
            event_id varchar(26) PRIMARY KEY,
            agent varchar(32) NOT NULL REFERENCES agents(handle) ON DELETE CASCADE,
            chat_id bigint NOT NULL,
            message_id bigint NOT NULL,
            received_at timestamptz NOT NULL
        )
        """
    )
    op.execute(
        "CREATE INDEX ix_telegram_inbound_chat_message "
        "ON telegram_inbound (agent, chat_id, message_id)"
    )
    op.execute(
        """
        CREATE TABLE telegram_sent (
            outbox_id varchar(26) NOT NULL,
            part integer NOT NULL,
            chat_id bigint NOT NULL,
            message_id bigint NOT NULL,
            sent_at timestamptz NOT NULL,
            PRIMARY KEY (outbox_id, part)
        )
        """
    )


def downgrade() -> None:
    """Drop the three tables."""
    op.execute("DROP TABLE telegram_sent")
    op.execute("DROP TABLE telegram_inbound")
    op.execute("DROP TABLE telegram_offsets")
