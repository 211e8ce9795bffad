"""The semantic half of dialog search (pgvector), plain listings, and loading hit rows."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sqlmodel.ext.asyncio.session import AsyncSession

from store.queries.search.filters import Filters
from store.sql import execute, vector_literal


async def semantic_candidates(
    session: AsyncSession,
    *,
    agent: str,
    channel_ids: Sequence[str],
    vector: Sequence[float],
    model: str,
    filters: Filters,
    limit: int,
) -> dict[str, tuple[str, float]]:
    """The nearest turns by cosine, as turn ID to (conversation ID, cosine similarity).

    Only vectors from ``model`` are compared: another model's live in another space. The HNSW
    scan keeps going past rows the filters reject (pgvector's iterative scan), so a selective
    filter still returns up to ``limit`` turns.
    """
    if not channel_ids:
        return {}
    await execute(session, "SET LOCAL hnsw.iterative_scan = relaxed_order")
    await execute(session, f"SET LOCAL hnsw.ef_search = {max(40, min(1000, 2 * limit))}")
    condition, bound = filters.sql("d")
    rows = await execute(
        session,
        "SELECT d.id, d.conversation_id, 1 - (d.embedding <=> CAST(:v AS vector)) AS cos "
        "FROM dialog_turns d WHERE d.agent = :agent "
        "AND d.channel_id = ANY(CAST(:channels AS text[])) AND d.embed_model = :model "
        f"AND d.embedding IS NOT NULL AND {condition} "
        "ORDER BY d.embedding <=> CAST(:v AS vector) LIMIT :limit",
        {
            "agent": agent,
            "channels": list(channel_ids),
            "v": vector_literal(vector),
            "model": model,
            "limit": limit,
            **bound,
        },
    )
    return {str(r.id): (str(r.conversation_id), float(r.cos)) for r in rows}


async def cosines(
    session: AsyncSession, *, turn_ids: Sequence[str], vector: Sequence[float], model: str
) -> dict[str, float]:
    """Cosine similarity of the named turns that have an embedding from ``model``."""
    if not turn_ids:
        return {}
    rows = await execute(
        session,
        "SELECT id, 1 - (embedding <=> CAST(:v AS vector)) AS cos FROM dialog_turns "
        "WHERE id = ANY(CAST(:ids AS text[])) AND embed_model = :model "
        "AND embedding IS NOT NULL",
        {"ids": list(turn_ids), "v": vector_literal(vector), "model": model},
    )
    return {str(r.id): float(r.cos) for r in rows}


async def listing(
    session: AsyncSession,
    *,
    agent: str,
    channel_ids: Sequence[str],
    filters: Filters,
    limit: int,
) -> list[str]:
    """IDs of the newest turns meeting the filters (a search with no ranking text)."""
    if not channel_ids:
        return []
    condition, bound = filters.sql("d")
    rows = await execute(
        session,
        "SELECT d.id FROM dialog_turns d WHERE d.agent = :agent "
        f"AND d.channel_id = ANY(CAST(:channels AS text[])) AND {condition} "
        "ORDER BY d.at DESC, d.id DESC LIMIT :limit",
        {"agent": agent, "channels": list(channel_ids), "limit": limit, **bound},
    )
    return [str(r.id) for r in rows]


async def turn_rows(session: AsyncSession, *, turn_ids: Sequence[str]) -> dict[str, Any]:
    """The stored turns with these IDs (the columns a hit shows), by ID."""
    if not turn_ids:
        return {}
    rows = await execute(
        session,
        "SELECT id, conversation_id, channel_id, role, speaker_id, speaker_name, text, at, "
        "tags, source_ref FROM dialog_turns WHERE id = ANY(CAST(:ids AS text[]))",
        {"ids": list(turn_ids)},
    )
    return {str(r.id): r for r in rows}
