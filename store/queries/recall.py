"""Recall candidates: the agent's memories that this conversation may see, nearest first.

Every query here applies the same three fences, in SQL, before anything is ranked:

* the agent's own records, not forgotten;
* of the current channel, or of a channel in its memory group (``channels.memory_group``);
* visible to everyone present, by the sensitivity rules of :mod:`schemas.memory`.

Nearest neighbours come from the HNSW cosine index with pgvector's iterative scan, so a
selective filter still yields ``limit`` rows instead of the few that survive one pass.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlmodel.ext.asyncio.session import AsyncSession

from schemas.dialog import DialogTurn, Role
from schemas.memory import MemoryRecordPublic
from store.lane import Lane
from store.queries.memory import to_public
from store.sql import execute as _execute
from store.sql import for_driver, tsquery_any, vector_literal
from store.tables.memory import MemoryRecord


@dataclass(frozen=True)
class Fence:
    """Whose memories, from which channels, seen by whom."""

    agent: str
    channel_ids: Sequence[str]
    present: Sequence[str]

    def params(self) -> dict[str, Any]:
        """The bind parameters :data:`FENCE_SQL` uses."""
        return {
            "agent": self.agent,
            "channels": list(self.channel_ids),
            "present": sorted(set(self.present)),
        }


FENCE_SQL = """
m.agent = :agent
AND m.channel_id = ANY(CAST(:channels AS varchar[]))
AND m.forgotten_at IS NULL
AND (
    m.sensitivity = 'public'
    OR (m.sensitivity = 'private' AND m.participants @> CAST(:present AS varchar[]))
    OR (m.sensitivity = 'confidential'
        AND cardinality(CAST(:present AS varchar[])) = 1
        AND m.participants @> CAST(:present AS varchar[]))
)
"""
"""The fences as a condition on ``memory_records m``; any other designation never shows."""

_COLUMNS = """
m.id, m.channel_id, m.summary, m.created_at, m.emotion, m.sensitivity, m.participants,
m.turn_first, m.turn_last, m.level, m.folded_into, m.turn_first_at, m.turn_last_at,
tsvector_to_array(to_tsvector('english', m.summary)) AS lexemes
"""


@dataclass(frozen=True)
class Candidate:
    """A visible record with what ranking needs."""

    id: str
    channel_id: str
    summary: str
    created_at: datetime
    emotion: str | None
    sensitivity: str
    participants: list[str]
    lexemes: list[str]
    cosine: float | None = None
    turn_first: str | None = None
    turn_last: str | None = None
    level: int = 1
    folded_into: str | None = None
    first_at: datetime | None = None
    last_at: datetime | None = None


def _candidate(row: Mapping[Any, Any], cosine: float | None = None) -> Candidate:
    return Candidate(
        id=str(row["id"]),
        channel_id=str(row["channel_id"]),
        summary=str(row["summary"]),
        created_at=row["created_at"],
        emotion=row["emotion"],
        sensitivity=str(row["sensitivity"]),
        participants=list(row["participants"] or []),
        lexemes=list(row["lexemes"] or []),
        cosine=cosine,
        turn_first=row["turn_first"],
        turn_last=row["turn_last"],
        level=int(row["level"]),
        folded_into=row["folded_into"],
        first_at=row["turn_first_at"],
        last_at=row["turn_last_at"],
    )


_GROUP_CHANNELS = (
    "SELECT c.id FROM channels cur JOIN channels c ON c.agent = cur.agent "
    "AND (c.id = cur.id OR (cur.memory_group IS NOT NULL AND c.memory_group = cur.memory_group)) "
    "WHERE cur.agent = :agent AND cur.key = :key"
)
"""The channel ``:key`` of ``:agent`` and every channel in its memory group, as ``c.id``."""


async def memory_channels(session: AsyncSession, *, agent: str, channel_key: str) -> list[str]:
    """IDs of the channel ``service:channel`` and of the channels in its memory group.

    Empty when the agent has no such channel (nothing was ever said there).
    """
    rows = await _execute(
        session, f"{_GROUP_CHANNELS} ORDER BY c.id", {"agent": agent, "key": channel_key}
    )
    return [str(row.id) for row in rows]


@dataclass(frozen=True)
class Ground:
    """What recall needs before any fence on who is present: one round trip.

    ``channel_ids``: as :func:`memory_channels`; ``lexemes``: the input's as summaries are
    indexed (English stems, stop words dropped);
    ``anything``: whether the agent keeps any record not forgotten in those channels, whoever
    may see it: without one there is nothing to rank, and a new agent never pays for encoding.
    """

    channel_ids: list[str]
    lexemes: list[str]
    anything: bool


_GROUND = (
    f"WITH ch AS ({_GROUP_CHANNELS}) "
    "SELECT ARRAY(SELECT id FROM ch ORDER BY id) AS channel_ids, "
    "tsvector_to_array(to_tsvector('english', :q)) AS lexemes, "
    "EXISTS (SELECT 1 FROM memory_records m WHERE m.agent = :agent "
    "AND m.channel_id IN (SELECT id FROM ch) AND m.forgotten_at IS NULL) AS anything"
)


async def recall_ground(lane: Lane, *, agent: str, channel_key: str, query: str) -> Ground:
    """The channels, the query's lexemes and whether any record is kept there, in one statement.

    It needs only the agent, the channel and the text, so admission can ask it before the
    person's turn is written (``activities.memory.recall.MemoryRecall.prime``). On the driver
    lane: every message's recall asks it.
    """
    row = await lane.first(for_driver(_GROUND), {"agent": agent, "key": channel_key, "q": query})
    assert row is not None  # a SELECT of values always returns its row
    return Ground(
        channel_ids=[str(i) for i in row["channel_ids"] or []],
        lexemes=[str(lexeme) for lexeme in row["lexemes"] or []],
        anything=bool(row["anything"]),
    )


async def semantic_candidates(
    session: AsyncSession,
    fence: Fence,
    *,
    vector: Sequence[float],
    model: str,
    limit: int,
    ef_search: int,
) -> list[Candidate]:
    """The ``limit`` visible records nearest to ``vector`` by cosine, nearest first.

    Only vectors from ``model`` are compared: another encoder's vectors live in another
    space. ``relaxed_order`` lets the index scan continue past rows the fences reject; the
    materialised CTE then puts its slightly unordered output back in order.
    """
    if not fence.channel_ids:
        return []
    settings = _index_settings(ef_search)
    # Both settings in one round trip; is_local=true makes them SET LOCAL (this transaction).
    await _execute(
        session,
        "SELECT set_config('hnsw.iterative_scan', :scan, true), "
        "set_config('hnsw.ef_search', :ef, true)",
        {"scan": settings["hnsw.iterative_scan"], "ef": settings["hnsw.ef_search"]},
    )
    params = _nearest_params(fence, vector=vector, model=model, limit=limit)
    rows = await _execute(session, _NEAREST, params)
    return [_candidate(row._mapping, 1.0 - float(row.distance)) for row in rows]


async def semantic_candidates_on(
    lane: Lane,
    fence: Fence,
    *,
    vector: Sequence[float],
    model: str,
    limit: int,
    ef_search: int,
) -> list[Candidate]:
    """:func:`semantic_candidates` on the driver lane: every recall with a vector runs it."""
    if not fence.channel_ids:
        return []
    rows = await lane.rows_with(
        _index_settings(ef_search),
        for_driver(_NEAREST),
        _nearest_params(fence, vector=vector, model=model, limit=limit),
    )
    return [_candidate(row, 1.0 - float(row["distance"])) for row in rows]


_NEAREST = (
    "WITH nearest AS MATERIALIZED ("
    "  SELECT m.id, m.embedding <=> CAST(:v AS vector) AS distance"
    "  FROM memory_records m"
    f" WHERE {FENCE_SQL} AND m.embed_model = :model AND m.embedding IS NOT NULL"
    "  ORDER BY m.embedding <=> CAST(:v AS vector) LIMIT :limit"
    f") SELECT {_COLUMNS}, n.distance FROM nearest n JOIN memory_records m ON m.id = n.id "
    "ORDER BY n.distance + 0, m.id"
)
"""The nearest visible records; the outer query orders them again (``relaxed_order``)."""


def _index_settings(ef_search: int) -> dict[str, str]:
    return {
        "hnsw.iterative_scan": "relaxed_order",
        "hnsw.ef_search": str(max(10, min(1000, int(ef_search)))),
    }


def _nearest_params(
    fence: Fence, *, vector: Sequence[float], model: str, limit: int
) -> dict[str, Any]:
    return {**fence.params(), "v": vector_literal(vector), "model": model, "limit": limit}


async def lexical_candidates(
    session: AsyncSession, fence: Fence, *, lexemes: Sequence[str], limit: int
) -> list[Candidate]:
    """Visible records for a ranking without vectors, at most ``limit``.

    Records sharing words with the input come first (best cover density first), then the
    newest others, so the budget fills as it would with vectors.
    """
    if not fence.channel_ids:
        return []
    found: list[Candidate] = []
    if lexemes:
        rows = await _execute(
            session,
            f"SELECT {_COLUMNS} FROM memory_records m, CAST(:q AS tsquery) q "
            f"WHERE {FENCE_SQL} AND to_tsvector('english', m.summary) @@ q "
            "ORDER BY ts_rank_cd(to_tsvector('english', m.summary), q) DESC, m.id DESC "
            "LIMIT :limit",
            {**fence.params(), "q": tsquery_any(lexemes), "limit": limit},
        )
        found = [_candidate(row._mapping) for row in rows]
    if len(found) < limit:
        rows = await _execute(
            session,
            f"SELECT {_COLUMNS} FROM memory_records m WHERE {FENCE_SQL} "
            "AND NOT (m.id = ANY(CAST(:seen AS varchar[]))) ORDER BY m.id DESC LIMIT :limit",
            {**fence.params(), "seen": [c.id for c in found], "limit": limit - len(found)},
        )
        found.extend(_candidate(row._mapping) for row in rows)
    return found


async def top_recollections(
    session: AsyncSession, fence: Fence, *, record_ids: Sequence[str]
) -> dict[str, Candidate]:
    """For each of ``record_ids`` folded into a live recollection, the highest one above it.

    The climb stops below a forgotten recollection; the one it reaches must pass the fences
    (it shares its records' channel and people, so it does unless the data was edited).
    """
    if not record_ids or not fence.channel_ids:
        return {}
    rows = await _execute(
        session,
        "WITH RECURSIVE up(start, id, parent, depth) AS ("
        "  SELECT m.id, m.id, m.folded_into, 0 FROM memory_records m"
        "  WHERE m.id = ANY(CAST(:ids AS varchar[])) AND m.folded_into IS NOT NULL"
        "  UNION ALL"
        "  SELECT up.start, p.id, p.folded_into, up.depth + 1 FROM up"
        "  JOIN memory_records p ON p.id = up.parent"
        "  WHERE p.forgotten_at IS NULL AND up.depth < 8"
        "), top AS ("
        "  SELECT DISTINCT ON (start) start, id FROM up WHERE depth > 0 ORDER BY start, depth DESC"
        f") SELECT top.start, {_COLUMNS} FROM top JOIN memory_records m ON m.id = top.id "
        f"WHERE {FENCE_SQL}",
        {**fence.params(), "ids": list(record_ids)},
    )
    return {str(row.start): _candidate(row._mapping) for row in rows}


async def memory_record(session: AsyncSession, *, record_id: str) -> MemoryRecordPublic | None:
    """One record by ID, whoever's it is (callers check the owner)."""
    row = await session.get(MemoryRecord, record_id)
    if row is None:
        return None
    return to_public(row)


async def passes_fence(session: AsyncSession, fence: Fence, *, record_id: str) -> bool:
    """Whether the record is one the fenced conversation may see."""
    if not fence.channel_ids:
        return False
    row = await _execute(
        session,
        f"SELECT EXISTS (SELECT 1 FROM memory_records m WHERE m.id = :id AND {FENCE_SQL})",
        {**fence.params(), "id": record_id},
    )
    return bool(row.scalar_one())


async def dialog_span(
    session: AsyncSession,
    *,
    agent: str,
    conversation_id: str,
    first: str | None,
    last: str | None,
    limit: int,
) -> list[DialogTurn]:
    """Turns of one conversation from ``first`` to ``last``, oldest first, at most ``limit``.

    Both ends are inclusive and open when ``None``. The span runs in arrival order (``seq``),
    not by ID: a person's turn ID is the client's event ID. An end that retention has since
    deleted took everything older with it, so a missing ``first`` opens the span's start and
    a missing ``last`` leaves it empty.
    """
    rows = await _execute(
        session,
        "SELECT id, conversation_id, role, speaker_id, speaker_name, text, at "
        "FROM dialog_turns WHERE agent = :agent AND conversation_id = :conversation "
        "AND (CAST(:first AS varchar) IS NULL OR seq >= coalesce("
        "     (SELECT f.seq FROM dialog_turns f WHERE f.id = :first), 0)) "
        "AND (CAST(:last AS varchar) IS NULL OR seq <= coalesce("
        "     (SELECT l.seq FROM dialog_turns l WHERE l.id = :last), 0)) "
        "ORDER BY seq LIMIT :limit",
        {
            "agent": agent,
            "conversation": conversation_id,
            "first": first,
            "last": last,
            "limit": limit,
        },
    )
    return [
        DialogTurn(
            turn_id=str(row.id),
            conversation_id=str(row.conversation_id),
            role=Role(row.role),
            speaker_id=str(row.speaker_id),
            speaker_name=str(row.speaker_name),
            text=str(row.text),
            at=row.at,
        )
        for row in rows
    ]
