"""The semantic half of dialog search (pgvector), plain listings, and loading hit rows."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sqlmodel.ext.asyncio.session import AsyncSession

from store.queries.search.filters import Filters
from store.sql import execute, tsquery_any, vector_literal


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


@dataclass(frozen=True)
class TurnFeatures:
    """What the fusion weighs about one candidate besides its BM25 score."""

    cosine: float | None
    """Cosine similarity of the turn's own embedding (``None``: no vector from this model)."""
    neighbour_cosine: float | None
    """The higher cosine of the turns just before and after it in its conversation."""
    speaker_named: bool
    """Whether the query names the turn's speaker."""


_COSINES = """
    CASE WHEN d.embed_model = :model THEN 1 - (d.embedding <=> CAST(:v AS vector)) END AS cos,
    GREATEST(
        (SELECT CASE WHEN p.embed_model = :model THEN 1 - (p.embedding <=> CAST(:v AS vector)) END
            FROM dialog_turns p WHERE p.conversation_id = d.conversation_id AND p.seq < d.seq
            ORDER BY p.seq DESC LIMIT 1),
        (SELECT CASE WHEN n.embed_model = :model THEN 1 - (n.embedding <=> CAST(:v AS vector)) END
            FROM dialog_turns n WHERE n.conversation_id = d.conversation_id AND n.seq > d.seq
            ORDER BY n.seq LIMIT 1)) AS near"""

_NAMED = "ts_filter(d.search_tsv, '{b}') @@ CAST(:names AS tsquery)"


async def turn_features(
    session: AsyncSession,
    *,
    turn_ids: Sequence[str],
    vector: Sequence[float] | None,
    model: str,
    lexemes: Sequence[str],
) -> dict[str, TurnFeatures]:
    """Cosines (own and neighbours') and whether the query's ``lexemes`` name the speaker.

    The speaker's name is the B field of the turn's search document, so a name is matched as
    the lexical half matches it (stemmed). Without a ``vector`` both cosines are ``None``.
    """
    if not turn_ids:
        return {}
    params: dict[str, Any] = {"ids": list(turn_ids)}
    cosines, named = "NULL::float8 AS cos, NULL::float8 AS near", "false"
    if vector is not None:
        cosines = _COSINES
        params |= {"v": vector_literal(vector), "model": model}
    if lexemes:
        named = _NAMED
        params["names"] = tsquery_any(lexemes)
    rows = await execute(
        session,
        f"SELECT d.id, {cosines}, {named} AS named "
        "FROM dialog_turns d WHERE d.id = ANY(CAST(:ids AS text[]))",
        params,
    )
    return {
        str(r.id): TurnFeatures(
            cosine=None if r.cos is None else float(r.cos),
            neighbour_cosine=None if r.near is None else float(r.near),
            speaker_named=bool(r.named),
        )
        for r in rows
    }


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
