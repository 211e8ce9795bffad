"""Usage rollup: ledger rows past the retention window, summed per agent, day and model.

Retention (the maintenance schedule's purge) adds each old row into its day's sum and deletes
it in the same transaction, so the totals ``persyn usage`` prints over whole days never change.

Revision ID: 0011_usage_rollup
Revises: 0010_guardrails
"""

from alembic import op

revision = "0011_usage_rollup"
down_revision = "0010_guardrails"
branch_labels = None
depends_on = None


def upgrade() -> None:
    """Create the daily usage sums."""
    op.execute(
        """
        CREATE TABLE usage_daily (
            agent varchar(32) NOT NULL,
            day date NOT NULL,
            channel varchar NOT NULL,
            provider varchar NOT NULL,
            model varchar NOT NULL,
            stage varchar NOT NULL,
            tier varchar NOT NULL,
            records bigint NOT NULL,
            input_tokens bigint NOT NULL,
            output_tokens bigint NOT NULL,
            cached_read_tokens bigint NOT NULL,
            cached_write_tokens bigint NOT NULL,
            units bigint NOT NULL,
            cost_usd double precision NOT NULL,
            unpriced bigint NOT NULL,
            PRIMARY KEY (agent, day, channel, provider, model, stage, tier)
        )
        """
    )


def downgrade() -> None:
    """Drop the daily sums (the rows they replaced are gone: totals shrink)."""
    op.execute("DROP TABLE usage_daily")
