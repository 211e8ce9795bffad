"""Turn embeddings: written at import, and filled in afterwards for turns that lack one."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from sqlalchemy import text

from activities.memory.encoder import Encoder
from schemas.memory_search import turn_embedding_text
from store.db import Database
from store.sql import vector_literal

BATCH = 64
"""Turns encoded and written per transaction."""


async def write_embeddings(
    db: Database, *, model: str, turn_ids: Sequence[str], vectors: Sequence[Sequence[float]]
) -> int:
    """Store ``vectors`` as the embeddings of ``turn_ids`` (made by ``model``); returns rows."""
    if not turn_ids:
        return 0
    async with db.engine.begin() as connection:
        result = await connection.execute(
            text(
                "UPDATE dialog_turns d SET embedding = CAST(v.vec AS vector), embed_model = :m "
                "FROM unnest(CAST(:ids AS text[]), CAST(:vecs AS text[])) AS v (id, vec) "
                "WHERE d.id = v.id"
            ),
            {"m": model, "ids": list(turn_ids), "vecs": [vector_literal(v) for v in vectors]},
        )
        return int(result.rowcount)


async def index_turns(db: Database, encoder: Encoder, agent: str, limit: int = 1_000) -> int:
    """Embed up to ``limit`` of the agent's turns that have no embedding yet, oldest first.

    Live turns are written without one (the response path never waits for the encoder); a
    background workflow calls this to catch up. Safe to run concurrently with itself: a turn
    encoded twice gets the same vector.

    Returns:
        How many turns were embedded.

    Raises:
        EncoderUnavailableError: The encoder cannot answer (what was done so far is kept).
    """
    done = 0
    while done < limit:
        async with db.engine.connect() as connection:
            rows = (
                await connection.execute(
                    text(
                        "SELECT id, speaker_name, at, text FROM dialog_turns "
                        "WHERE agent = :a AND embedding IS NULL ORDER BY id LIMIT :n"
                    ),
                    {"a": agent, "n": min(BATCH, limit - done)},
                )
            ).all()
        if not rows:
            break
        vectors = await encoder.encode([_document(r.speaker_name, r.at, r.text) for r in rows])
        await write_embeddings(
            db, model=encoder.name, turn_ids=[r.id for r in rows], vectors=vectors
        )
        done += len(rows)
    return done


def _document(speaker_name: str, at: datetime, body: str) -> str:
    return turn_embedding_text(speaker_name=speaker_name, at=at, text=body)
