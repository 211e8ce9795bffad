"""Re-encode everything after the encoder changes (``persyn memory reindex``).

Resizes the vector columns to the encoder's dimensionality, re-encodes every memory record and
dialog turn whose vector is missing or from another model, in batches, and rebuilds the HNSW
indexes. It is resumable: run it again after an interruption and it carries on where it stopped.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

from sqlalchemy import text

from activities.memory.encoder import Encoder
from activities.memory.encoders.dimensions import stored_dimensions
from schemas.memory_search import turn_embedding_text
from store.db import Database
from store.sql import vector_literal

BATCH = 128

_INDEXES = {
    "memory_records": "ix_memory_embedding",
    "dialog_turns": "ix_dialog_turns_embedding",
}

# The build quality each index was created with (migrations 0006 and 0002): a rebuild keeps it.
_EF_CONSTRUCTION = {"memory_records": 200, "dialog_turns": 64}

# A forgotten memory must never regain a vector: no index may return it again.
_ELIGIBLE = {"memory_records": "forgotten_at IS NULL AND ", "dialog_turns": ""}

Progress = Callable[[str, int], None]
"""Told (table, rows done so far) after every batch."""


async def reindex(
    db: Database, encoder: Encoder, *, batch: int = BATCH, progress: Progress | None = None
) -> dict[str, int]:
    """Bring every stored vector to ``encoder``'s model and size.

    Returns:
        Rows re-encoded per table.

    Raises:
        EncoderUnavailableError: The encoder failed; the work done so far is kept.
    """
    sizes = await stored_dimensions(db)
    async with db.engine.begin() as connection:
        for table, index in _INDEXES.items():
            if sizes.get(f"{table}.embedding") != encoder.dimensions:
                await connection.execute(text(f"DROP INDEX IF EXISTS {index}"))
                await connection.execute(
                    text(
                        f"ALTER TABLE {table} ALTER COLUMN embedding "
                        f"TYPE vector({int(encoder.dimensions)}) USING NULL"
                    )
                )
    done = {"memory_records": 0, "dialog_turns": 0}
    try:
        done["memory_records"] = await _reencode(
            db, encoder, "memory_records", "summary AS body", batch, progress
        )
        done["dialog_turns"] = await _reencode(
            db, encoder, "dialog_turns", "speaker_name, at, text AS body", batch, progress
        )
    finally:
        # Rebuilt even after a failure, so search keeps an index over what is done.
        async with db.engine.begin() as connection:
            for table, index in _INDEXES.items():
                await connection.execute(
                    text(
                        f"CREATE INDEX IF NOT EXISTS {index} ON {table} USING hnsw "
                        "(embedding vector_cosine_ops) "
                        f"WITH (m = 16, ef_construction = {_EF_CONSTRUCTION[table]})"
                    )
                )
    return done


async def _reencode(
    db: Database,
    encoder: Encoder,
    table: str,
    columns: str,
    batch: int,
    progress: Progress | None,
) -> int:
    done, after = 0, ""
    while True:
        async with db.engine.connect() as connection:
            rows = (
                await connection.execute(
                    text(
                        f"SELECT id, {columns} FROM {table} WHERE {_ELIGIBLE[table]}id > :after "
                        "AND (embedding IS NULL OR embed_model IS DISTINCT FROM :model) "
                        "ORDER BY id LIMIT :n"
                    ),
                    {"after": after, "model": encoder.name, "n": batch},
                )
            ).all()
        if not rows:
            return done
        if table == "dialog_turns":
            documents = [_turn(r.speaker_name, r.at, r.body) for r in rows]
        else:
            documents = [str(r.body) for r in rows]
        vectors = await encoder.encode(documents)
        async with db.engine.begin() as connection:
            await connection.execute(
                text(
                    f"UPDATE {table} t SET embedding = CAST(v.vec AS vector), embed_model = :m "
                    "FROM unnest(CAST(:ids AS text[]), CAST(:vecs AS text[])) AS v (id, vec) "
                    "WHERE t.id = v.id"
                ),
                {
                    "m": encoder.name,
                    "ids": [r.id for r in rows],
                    "vecs": [vector_literal(v) for v in vectors],
                },
            )
        done += len(rows)
        after = str(rows[-1].id)
        if progress is not None:
            progress(table, done)


def _turn(speaker_name: str, at: datetime, body: str) -> str:
    return turn_embedding_text(speaker_name=speaker_name, at=at, text=body)
