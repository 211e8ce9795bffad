"""Guardrails: every firing with its evidence, and the cooldowns firings set.

A firing is unique per exchange and rule, so an evaluation retried after a worker died finds
its own row. A cooldown is one row per agent and scope key (a person's ID or a channel key),
replaced when a later firing extends it.

Revision ID: 0010_guardrails
Revises: 0009_observation_briefs
"""

from alembic import op

revision = "0010_guardrails"
down_revision = "0009_observation_briefs"
branch_labels = None
depends_on = None


def upgrade() -> None:
    """Create the firings and cooldowns tables."""
    op.execute(
        """
        CREATE TABLE guardrail_firings (
            id varchar(26) PRIMARY KEY,
            agent varchar(32) NOT NULL REFERENCES agents(handle) ON DELETE CASCADE,
            rule_id varchar(64) NOT NULL,
            actions varchar[] NOT NULL DEFAULT '{}',
            evidence varchar[] NOT NULL DEFAULT '{}',
            summary text NOT NULL,
            person_id varchar(26),
            channel_key text,
            conversation_id varchar(26),
            activation_id varchar(26),
            blocking boolean NOT NULL DEFAULT false,
            fired_at timestamptz NOT NULL,
            notified_at timestamptz,
            CONSTRAINT uq_guardrail_firings_exchange UNIQUE (activation_id, rule_id)
        )
        """
    )
    op.execute("CREATE INDEX ix_guardrail_firings_agent_at ON guardrail_firings (agent, fired_at)")
    op.execute(
        """
        CREATE TABLE guardrail_cooldowns (
            agent varchar(32) NOT NULL REFERENCES agents(handle) ON DELETE CASCADE,
            scope varchar(16) NOT NULL,
            key text NOT NULL,
            until timestamptz NOT NULL,
            rule_id varchar(64) NOT NULL,
            firing_id varchar(26),
            PRIMARY KEY (agent, scope, key),
            CONSTRAINT ck_guardrail_cooldowns_scope CHECK (scope IN ('person', 'channel'))
        )
        """
    )


def downgrade() -> None:
    """Drop the guardrail tables."""
    op.execute("DROP TABLE guardrail_cooldowns")
    op.execute("DROP TABLE guardrail_firings")
