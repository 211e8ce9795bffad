"""Recall: rebuild the memory vectors' HNSW index with a better-connected graph.

0001 built ``ix_memory_embedding`` with ``ef_construction = 64``. On clustered vectors (which
memories are: one agent talks about a few themes for months) that graph leaves some regions
poorly linked, and a filtered search that starts in the wrong one stops there: in
``bench/retrieval_scale.py`` (100,000 records, see ``bench/RESULTS.md``) up to one query in a
hundred returned none of its true ten nearest at ``ef_search`` 100. With ``ef_construction =
200`` mean recall@10 is 0.999 and the worst query keeps 9 of 10. Inserts cost more (one
consolidation writes a few records), and the build takes about 2.5 times as long: 143-190 s
for 100,000 records on two busy shared cores, against 54-79 s.

The new index is built beside the old one (reads keep using the old one meanwhile), then
replaces it under the same name.

Revision ID: 0006
Revises: 0002
"""

from alembic import op

revision = "0006"
down_revision = "0002"
branch_labels = None
depends_on = None


def _rebuild(ef_construction: int) -> None:
    # The graph of a large store outgrows the default 64 MB and the build slows down badly.
    op.execute("SET LOCAL maintenance_work_mem = '256MB'")
    op.execute(
        "CREATE INDEX ix_memory_embedding_next ON memory_records USING hnsw "
        f"(embedding vector_cosine_ops) WITH (m = 16, ef_construction = {ef_construction})"
    )
    op.execute("DROP INDEX ix_memory_embedding")
    op.execute("ALTER INDEX ix_memory_embedding_next RENAME TO ix_memory_embedding")


def upgrade() -> None:
    _rebuild(200)


def downgrade() -> None:
    _rebuild(64)
