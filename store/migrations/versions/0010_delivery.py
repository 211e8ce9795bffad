"""Outbound delivery: each outbox row's delivery state, and pacing overrides per agent.

``status`` is pending, delivered, awaiting_pickup, failed or blocked. Rows written before
delivery existed were announced live and never delivered by anything: they become delivered,
so a console connecting now does not replay months of old messages. ``tokens`` is what a
paced message counted against its channel's budget (set once, when it was let through).
``pacing_overrides`` holds an agent's own pacing settings, for all its channels (``*``) or one.

Revision ID: 0010_delivery
Revises: 0009_observation_briefs
"""

from alembic import op

revision = "0010_delivery"
down_revision = "0009_observation_briefs"
branch_labels = None
depends_on = None


def upgrade() -> None:
    """Add the delivery columns and the pacing overrides table."""
    op.execute(
        """
        ALTER TABLE outbox
            ADD COLUMN status varchar(16) NOT NULL DEFAULT 'delivered',
            ADD COLUMN attempts integer NOT NULL DEFAULT 0,
            ADD COLUMN last_error text,
            ADD COLUMN delivered_at timestamptz,
            ADD COLUMN external_id varchar(200),
            ADD COLUMN tokens integer,
            ADD COLUMN paced_until timestamptz
        """
    )
    op.execute("ALTER TABLE outbox ALTER COLUMN status SET DEFAULT 'pending'")
    op.execute("CREATE INDEX ix_outbox_status ON outbox (status, created_at)")
    op.execute("CREATE INDEX ix_outbox_channel ON outbox (agent, channel_key, created_at)")
    op.execute(
        """
        CREATE TABLE pacing_overrides (
            agent varchar(32) NOT NULL REFERENCES agents(handle) ON DELETE CASCADE,
            channel_key varchar(300) NOT NULL,
            settings jsonb NOT NULL DEFAULT '{}',
            updated_at timestamptz NOT NULL,
            PRIMARY KEY (agent, channel_key)
        )
        """
    )


def downgrade() -> None:
    """Drop them."""
    op.execute("DROP TABLE pacing_overrides")
    op.execute("DROP INDEX ix_outbox_channel")
    op.execute("DROP INDEX ix_outbox_status")
    op.execute(
        """
        ALTER TABLE outbox
            DROP COLUMN status, DROP COLUMN attempts, DROP COLUMN last_error,
            DROP COLUMN delivered_at, DROP COLUMN external_id, DROP COLUMN tokens,
            DROP COLUMN paced_until
        """
    )
