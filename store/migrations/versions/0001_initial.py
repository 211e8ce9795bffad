"""The initial schema: agents, people, identities, channels, conversations, dialog, memory,
usage ledger, prompts, activations, completion markers and the outbox.

Revision ID: 0001
Revises:
"""

from alembic import context, op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None

TABLES = """
CREATE EXTENSION IF NOT EXISTS vector;

CREATE TABLE agents (
    handle VARCHAR(32) PRIMARY KEY,
    name VARCHAR NOT NULL,
    persona VARCHAR NOT NULL,
    config JSONB NOT NULL DEFAULT '{}',
    created_at TIMESTAMPTZ NOT NULL,
    updated_at TIMESTAMPTZ NOT NULL
);

CREATE TABLE people (
    id VARCHAR(26) PRIMARY KEY,
    agent VARCHAR(32) NOT NULL REFERENCES agents (handle) ON DELETE CASCADE,
    display_name VARCHAR NOT NULL,
    created_at TIMESTAMPTZ NOT NULL,
    last_seen_at TIMESTAMPTZ NOT NULL,
    preferred_channel VARCHAR
);
CREATE INDEX ix_people_agent ON people (agent);

CREATE TABLE identities (
    id VARCHAR(26) PRIMARY KEY,
    agent VARCHAR(32) NOT NULL REFERENCES agents (handle) ON DELETE CASCADE,
    person_id VARCHAR(26) NOT NULL REFERENCES people (id) ON DELETE CASCADE,
    service VARCHAR NOT NULL,
    channel VARCHAR NOT NULL,
    speaker_id VARCHAR NOT NULL,
    created_at TIMESTAMPTZ NOT NULL,
    CONSTRAINT uq_identity_lookup UNIQUE (agent, service, channel, speaker_id)
);
CREATE INDEX ix_identities_person_id ON identities (person_id);

CREATE TABLE channels (
    id VARCHAR(26) PRIMARY KEY,
    agent VARCHAR(32) NOT NULL REFERENCES agents (handle) ON DELETE CASCADE,
    key VARCHAR NOT NULL,
    service VARCHAR NOT NULL,
    channel VARCHAR NOT NULL,
    memory_group VARCHAR,
    created_at TIMESTAMPTZ NOT NULL,
    last_active_at TIMESTAMPTZ NOT NULL,
    last_person_id VARCHAR(26),
    CONSTRAINT uq_channel_key UNIQUE (agent, key)
);
CREATE INDEX ix_channels_agent_group ON channels (agent, memory_group);

CREATE TABLE conversations (
    id VARCHAR(26) PRIMARY KEY,
    agent VARCHAR(32) NOT NULL REFERENCES agents (handle) ON DELETE CASCADE,
    channel_id VARCHAR(26) NOT NULL REFERENCES channels (id),
    status VARCHAR NOT NULL,
    opened_at TIMESTAMPTZ NOT NULL,
    closed_at TIMESTAMPTZ,
    close_reason VARCHAR,
    turns INTEGER NOT NULL,
    participants VARCHAR[] NOT NULL DEFAULT '{}',
    source VARCHAR NOT NULL
);
CREATE INDEX ix_conversations_agent_channel ON conversations (agent, channel_id, id);

CREATE TABLE dialog_turns (
    id VARCHAR(26) PRIMARY KEY,
    agent VARCHAR(32) NOT NULL REFERENCES agents (handle) ON DELETE CASCADE,
    conversation_id VARCHAR(26) NOT NULL REFERENCES conversations (id) ON DELETE CASCADE,
    channel_id VARCHAR(26) NOT NULL REFERENCES channels (id),
    role VARCHAR NOT NULL,
    speaker_id VARCHAR NOT NULL,
    speaker_name VARCHAR NOT NULL,
    person_id VARCHAR(26),
    text TEXT NOT NULL,
    at TIMESTAMPTZ NOT NULL,
    tags VARCHAR[] NOT NULL DEFAULT '{}',
    tsv TSVECTOR GENERATED ALWAYS AS (to_tsvector('english', speaker_name || ' ' || text)) STORED
);
CREATE INDEX ix_dialog_turns_conversation ON dialog_turns (conversation_id, id);
CREATE INDEX ix_dialog_turns_agent_channel_at ON dialog_turns (agent, channel_id, at);
CREATE INDEX ix_dialog_turns_tsv ON dialog_turns USING gin (tsv);
CREATE INDEX ix_dialog_turns_tags ON dialog_turns USING gin (tags);

CREATE TABLE memory_records (
    id VARCHAR(26) PRIMARY KEY,
    agent VARCHAR(32) NOT NULL REFERENCES agents (handle) ON DELETE CASCADE,
    channel_id VARCHAR(26) NOT NULL REFERENCES channels (id),
    conversation_id VARCHAR(26),
    summary TEXT NOT NULL,
    embedding VECTOR({dimensions}),
    embed_model VARCHAR,
    importance SMALLINT NOT NULL,
    tags VARCHAR[] NOT NULL DEFAULT '{}',
    emotion VARCHAR,
    sensitivity VARCHAR NOT NULL,
    participants VARCHAR[] NOT NULL DEFAULT '{}',
    turn_first VARCHAR(26),
    turn_last VARCHAR(26),
    created_at TIMESTAMPTZ NOT NULL,
    forgotten_at TIMESTAMPTZ
);
CREATE INDEX ix_memory_agent_channel ON memory_records (agent, channel_id, id);
CREATE INDEX ix_memory_tags ON memory_records USING gin (tags);
CREATE INDEX ix_memory_embedding ON memory_records
    USING hnsw (embedding vector_cosine_ops) WITH (m = 16, ef_construction = 64);

CREATE TABLE usage_records (
    record_id VARCHAR(40) PRIMARY KEY,
    stage VARCHAR NOT NULL,
    provider VARCHAR NOT NULL,
    model VARCHAR NOT NULL,
    tier VARCHAR NOT NULL,
    input_tokens INTEGER NOT NULL,
    output_tokens INTEGER NOT NULL,
    cached_read_tokens INTEGER NOT NULL,
    cached_write_tokens INTEGER NOT NULL,
    units INTEGER NOT NULL,
    cost_usd DOUBLE PRECISION,
    agent VARCHAR,
    channel VARCHAR,
    conversation VARCHAR,
    activation VARCHAR,
    occurred_at TIMESTAMPTZ NOT NULL,
    latency_ms DOUBLE PRECISION NOT NULL
);
CREATE INDEX ix_usage_agent_at ON usage_records (agent, occurred_at);
CREATE INDEX ix_usage_conversation ON usage_records (conversation);
CREATE INDEX ix_usage_activation ON usage_records (activation);

CREATE TABLE prompts (
    id VARCHAR(26) PRIMARY KEY,
    activation_id VARCHAR(26),
    task VARCHAR NOT NULL,
    system TEXT NOT NULL,
    messages JSONB NOT NULL,
    extra JSONB NOT NULL,
    token_estimate INTEGER NOT NULL,
    created_at TIMESTAMPTZ NOT NULL
);
CREATE INDEX ix_prompts_activation_id ON prompts (activation_id);
CREATE INDEX ix_prompts_created_at ON prompts (created_at);

CREATE TABLE activations (
    id VARCHAR(26) PRIMARY KEY,
    agent VARCHAR(32) NOT NULL,
    event_id VARCHAR(26) NOT NULL,
    conversation_id VARCHAR(26),
    trigger VARCHAR NOT NULL,
    outcome VARCHAR NOT NULL,
    text TEXT,
    reason VARCHAR,
    degraded BOOLEAN NOT NULL,
    completed_at TIMESTAMPTZ NOT NULL
);
CREATE INDEX ix_activations_event_id ON activations (event_id);
CREATE INDEX ix_activations_agent_at ON activations (agent, completed_at);

CREATE TABLE completion_markers (
    event_id VARCHAR(26) PRIMARY KEY,
    agent VARCHAR(32) NOT NULL,
    activation_id VARCHAR(26),
    conversation_id VARCHAR(26),
    outcome VARCHAR NOT NULL,
    text TEXT,
    reason VARCHAR,
    degraded BOOLEAN NOT NULL,
    completed_at TIMESTAMPTZ NOT NULL,
    expires_at TIMESTAMPTZ NOT NULL
);
CREATE INDEX ix_completion_markers_expires_at ON completion_markers (expires_at);

CREATE TABLE outbox (
    id VARCHAR(26) PRIMARY KEY,
    activation_id VARCHAR(26) NOT NULL UNIQUE,
    agent VARCHAR(32) NOT NULL,
    channel_key VARCHAR NOT NULL,
    conversation_id VARCHAR(26),
    text TEXT NOT NULL,
    unprompted BOOLEAN NOT NULL,
    created_at TIMESTAMPTZ NOT NULL
);
CREATE INDEX ix_outbox_agent_created ON outbox (agent, created_at);
"""

DROPS = """
DROP TABLE IF EXISTS outbox, completion_markers, activations, prompts, usage_records,
    memory_records, dialog_turns, conversations, channels, identities, people, agents CASCADE;
"""


def upgrade() -> None:
    # The vector column is sized from the configured encoder (store.migrate passes it in).
    dimensions = int(context.config.attributes.get("embedding_dimensions", 384))
    sql = TABLES.replace("{dimensions}", str(dimensions))
    op.execute(sql)


def downgrade() -> None:
    op.execute(DROPS)
