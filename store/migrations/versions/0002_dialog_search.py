"""Dialog search: turn embeddings, a weighted search document per turn, and BM25 statistics.

Each turn gets
- ``embedding vector(N)`` (N from settings, as in 0001) with the model that made it and an HNSW
  index, so semantic search runs next to the lexical one;
- ``source_ref``: the key an importer gave the turn (e.g. LoCoMo's ``dia_id``);
- ``search_tsv``: the lexical search document, three fields in one tsvector told apart by
  weight: A the text, B the speaker's name, C the date ("8 May 2023"); and ``search_len``, the
  number of text tokens, for BM25's length normalisation.

A trigger fills the document on insert (live write-through and imports alike). Two statement
triggers keep BM25's corpus statistics per agent and channel (turns, total length, and the number
of turns holding each lexeme) in step with inserts and deletes, so a query reads the statistics
of any set of channels from a few rows instead of counting over the corpus.

Revision ID: 0002
Revises: 0001
"""

from alembic import context, op

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None

UPGRADE = """
ALTER TABLE dialog_turns
    ADD COLUMN embedding VECTOR({dimensions}),
    ADD COLUMN embed_model VARCHAR,
    ADD COLUMN source_ref VARCHAR,
    ADD COLUMN search_tsv TSVECTOR,
    ADD COLUMN search_len INTEGER NOT NULL DEFAULT 0;

CREATE FUNCTION persyn_search_document(body TEXT, speaker TEXT, said_at TIMESTAMPTZ)
RETURNS TSVECTOR LANGUAGE sql STABLE PARALLEL SAFE AS $$
    SELECT setweight(to_tsvector('english', body), 'A')
        || setweight(to_tsvector('english', speaker), 'B')
        || setweight(
            to_tsvector('english', to_char(said_at AT TIME ZONE 'UTC', 'FMDD FMMonth YYYY')), 'C')
$$;

CREATE FUNCTION persyn_search_length(body TEXT) RETURNS INTEGER
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT coalesce(sum(cardinality(positions)), 0)::integer
    FROM unnest(to_tsvector('english', body))
$$;

CREATE FUNCTION persyn_dialog_search_row() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    NEW.search_tsv := persyn_search_document(NEW.text, NEW.speaker_name, NEW.at);
    NEW.search_len := persyn_search_length(NEW.text);
    RETURN NEW;
END $$;

CREATE TRIGGER dialog_turns_search_row
    BEFORE INSERT OR UPDATE OF text, speaker_name, at ON dialog_turns
    FOR EACH ROW EXECUTE FUNCTION persyn_dialog_search_row();

UPDATE dialog_turns
SET search_tsv = persyn_search_document(text, speaker_name, at),
    search_len = persyn_search_length(text);

CREATE TABLE dialog_search_stats (
    agent VARCHAR(32) NOT NULL REFERENCES agents (handle) ON DELETE CASCADE,
    channel_id VARCHAR(26) NOT NULL,
    docs BIGINT NOT NULL,
    total_len BIGINT NOT NULL,
    PRIMARY KEY (agent, channel_id)
);

CREATE TABLE dialog_search_terms (
    agent VARCHAR(32) NOT NULL REFERENCES agents (handle) ON DELETE CASCADE,
    channel_id VARCHAR(26) NOT NULL,
    lexeme TEXT NOT NULL,
    docs INTEGER NOT NULL,
    PRIMARY KEY (agent, channel_id, lexeme)
);

-- Rows are upserted in key order so that concurrent writers lock them in the same order.
CREATE FUNCTION persyn_dialog_stats_added() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO dialog_search_stats AS s (agent, channel_id, docs, total_len)
    SELECT agent, channel_id, count(*), sum(search_len) FROM added
    GROUP BY agent, channel_id ORDER BY agent, channel_id
    ON CONFLICT (agent, channel_id) DO UPDATE
        SET docs = s.docs + EXCLUDED.docs, total_len = s.total_len + EXCLUDED.total_len;
    INSERT INTO dialog_search_terms AS t (agent, channel_id, lexeme, docs)
    SELECT a.agent, a.channel_id, u.lexeme, count(*)
    FROM added a CROSS JOIN LATERAL unnest(tsvector_to_array(a.search_tsv)) AS u (lexeme)
    GROUP BY a.agent, a.channel_id, u.lexeme ORDER BY a.agent, a.channel_id, u.lexeme
    ON CONFLICT (agent, channel_id, lexeme) DO UPDATE SET docs = t.docs + EXCLUDED.docs;
    RETURN NULL;
END $$;

CREATE FUNCTION persyn_dialog_stats_removed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE dialog_search_stats AS s
    SET docs = s.docs - r.docs, total_len = s.total_len - r.total_len
    FROM (SELECT agent, channel_id, count(*) AS docs, sum(search_len) AS total_len
          FROM removed GROUP BY agent, channel_id ORDER BY agent, channel_id) AS r
    WHERE s.agent = r.agent AND s.channel_id = r.channel_id;
    UPDATE dialog_search_terms AS t SET docs = t.docs - r.docs
    FROM (SELECT x.agent, x.channel_id, u.lexeme, count(*) AS docs
          FROM removed x CROSS JOIN LATERAL unnest(tsvector_to_array(x.search_tsv)) AS u (lexeme)
          GROUP BY x.agent, x.channel_id, u.lexeme
          ORDER BY x.agent, x.channel_id, u.lexeme) AS r
    WHERE t.agent = r.agent AND t.channel_id = r.channel_id AND t.lexeme = r.lexeme;
    DELETE FROM dialog_search_terms AS t USING (SELECT DISTINCT agent, channel_id FROM removed) AS r
    WHERE t.agent = r.agent AND t.channel_id = r.channel_id AND t.docs <= 0;
    RETURN NULL;
END $$;

CREATE TRIGGER dialog_turns_search_stats_added
    AFTER INSERT ON dialog_turns REFERENCING NEW TABLE AS added
    FOR EACH STATEMENT EXECUTE FUNCTION persyn_dialog_stats_added();

CREATE TRIGGER dialog_turns_search_stats_removed
    AFTER DELETE ON dialog_turns REFERENCING OLD TABLE AS removed
    FOR EACH STATEMENT EXECUTE FUNCTION persyn_dialog_stats_removed();

INSERT INTO dialog_search_stats (agent, channel_id, docs, total_len)
SELECT agent, channel_id, count(*), sum(search_len) FROM dialog_turns GROUP BY agent, channel_id;
INSERT INTO dialog_search_terms (agent, channel_id, lexeme, docs)
SELECT d.agent, d.channel_id, u.lexeme, count(*)
FROM dialog_turns d CROSS JOIN LATERAL unnest(tsvector_to_array(d.search_tsv)) AS u (lexeme)
GROUP BY d.agent, d.channel_id, u.lexeme;

CREATE INDEX ix_dialog_turns_search_tsv ON dialog_turns USING gin (search_tsv);
CREATE INDEX ix_dialog_turns_embedding ON dialog_turns
    USING hnsw (embedding vector_cosine_ops) WITH (m = 16, ef_construction = 64);
-- Turns still waiting for an embedding, oldest first (index_turns reads this).
CREATE INDEX ix_dialog_turns_unembedded ON dialog_turns (agent, id) WHERE embedding IS NULL;
"""

DOWNGRADE = """
DROP TRIGGER IF EXISTS dialog_turns_search_stats_removed ON dialog_turns;
DROP TRIGGER IF EXISTS dialog_turns_search_stats_added ON dialog_turns;
DROP TRIGGER IF EXISTS dialog_turns_search_row ON dialog_turns;
DROP FUNCTION IF EXISTS persyn_dialog_stats_removed();
DROP FUNCTION IF EXISTS persyn_dialog_stats_added();
DROP FUNCTION IF EXISTS persyn_dialog_search_row();
DROP FUNCTION IF EXISTS persyn_search_length(TEXT);
DROP FUNCTION IF EXISTS persyn_search_document(TEXT, TEXT, TIMESTAMPTZ);
DROP TABLE IF EXISTS dialog_search_terms, dialog_search_stats;
DROP INDEX IF EXISTS ix_dialog_turns_unembedded;
DROP INDEX IF EXISTS ix_dialog_turns_embedding;
DROP INDEX IF EXISTS ix_dialog_turns_search_tsv;
ALTER TABLE dialog_turns
    DROP COLUMN IF EXISTS search_len,
    DROP COLUMN IF EXISTS search_tsv,
    DROP COLUMN IF EXISTS source_ref,
    DROP COLUMN IF EXISTS embed_model,
    DROP COLUMN IF EXISTS embedding;
"""


def upgrade() -> None:
    # Sized from the configured encoder, like memory_records.embedding (store.migrate passes it).
    dimensions = int(context.config.attributes.get("embedding_dimensions", 384))
    op.execute(UPGRADE.replace("{dimensions}", str(dimensions)))


def downgrade() -> None:
    op.execute(DOWNGRADE)
