"""Web tenants: each token's namespace, and which tenant posted each event.

A token's ``tenant`` is its own ID (existing tokens too), or the ID of the token a rotation
replaced. ``web_events`` records the tenant that posted an event, so only it reads the
event's marker. This revision also joins every branch that was open, so the chain is one
line from here.

Revision ID: 0012_web_tenants
Revises: every head before it
"""

from alembic import op

revision = "0012_web_tenants"
down_revision = (
    "0004",
    "0005",
    "0007_codec",
    "0007_order",
    "0007_drafts",
    "0008_contacts",
    "0008_graph",
    "0010_delivery",
    "0010_emotion",
    "0010_telegram",
    "0010_tokens",
    "0011_usage_rollup",
)
branch_labels = None
depends_on = None


def upgrade() -> None:
    """Give every token its tenant; create the events table."""
    op.execute("ALTER TABLE web_tokens ADD COLUMN tenant varchar(26)")
    op.execute("UPDATE web_tokens SET tenant = id")
    op.execute("ALTER TABLE web_tokens ALTER COLUMN tenant SET NOT NULL")
    op.execute(
        """
        CREATE TABLE web_events (
            event_id varchar(26) PRIMARY KEY,
            agent varchar(32) NOT NULL REFERENCES agents (handle) ON DELETE CASCADE,
            tenant varchar(26) NOT NULL,
            created_at timestamptz NOT NULL
        )
        """
    )
    op.execute("CREATE INDEX ix_web_events_created_at ON web_events (created_at)")


def downgrade() -> None:
    """Drop the events table and the tenant column."""
    op.execute("DROP TABLE web_events")
    op.execute("ALTER TABLE web_tokens DROP COLUMN tenant")
