"""The lexical half of dialog search: BM25F computed inside PostgreSQL.

Each turn's ``search_tsv`` (migration 0002) holds three fields told apart by weight: A the
text, B the speaker's name, C the date. A term's frequency in a turn is the weighted sum over
its positions, plus a fraction of its frequency in the text of the turns around it (the one just
before and after, and half as much the one beyond each): a reply ("Yes, last Tuesday!") is often
only understood with the message it answers, and an answer often comes a turn or two later. Document
frequencies and lengths come from the statistics that triggers keep per channel, so IDF covers
the whole searched corpus, not only the candidates. Candidates come from the GIN index.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

from sqlmodel.ext.asyncio.session import AsyncSession

from store.queries.search.filters import Filters
from store.sql import execute, tsquery_any


@dataclass(frozen=True)
class Bm25Params:
    """BM25F weights. Chat turns are short and alike in length, so length matters little (b)."""

    k1: float = 0.9
    b: float = 0.1
    w_text: float = 1.0
    w_speaker: float = 1.0
    w_date: float = 1.0
    w_context: float = 0.3
    """Share of a term's frequency in the text of the turn just before or after."""
    w_context_far: float = 0.15
    """Share from the turn two before or after (0 reads only the nearest neighbours)."""
    common_fraction: float = 0.2
    """On large corpora, terms in more than this fraction of turns do not fetch candidates."""
    common_floor: int = 5_000
    """Terms in fewer turns than this always fetch: small corpora are searched exactly."""


@dataclass
class Corpus:
    """BM25 statistics of a set of channels."""

    docs: int = 0
    avg_len: float = 1.0
    df: dict[str, int] = field(default_factory=dict)

    def idf(self, lexeme: str) -> float:
        """Robertson-Sparck Jones IDF in its always-positive form."""
        n = self.df.get(lexeme, 0)
        return math.log(1.0 + (self.docs - n + 0.5) / (n + 0.5))


async def query_terms(session: AsyncSession, query: str) -> dict[str, int]:
    """The query's lexemes (stemmed, stop words dropped, as turns are) and their counts."""
    rows = await execute(
        session,
        "SELECT lexeme, cardinality(positions) AS n FROM unnest(to_tsvector('english', :q))",
        {"q": query},
    )
    return {str(row.lexeme): int(row.n) for row in rows}


async def corpus(
    session: AsyncSession, *, agent: str, channel_ids: Sequence[str], lexemes: Sequence[str]
) -> Corpus:
    """Turn count, average text length and document frequencies over these channels."""
    params = {"agent": agent, "channels": list(channel_ids), "lexemes": list(lexemes)}
    totals = (
        await execute(
            session,
            "SELECT coalesce(sum(docs), 0) AS docs, coalesce(sum(total_len), 0) AS total "
            "FROM dialog_search_stats "
            "WHERE agent = :agent AND channel_id = ANY(CAST(:channels AS text[]))",
            params,
        )
    ).one()
    rows = await execute(
        session,
        "SELECT lexeme, sum(docs) AS docs FROM dialog_search_terms "
        "WHERE agent = :agent AND channel_id = ANY(CAST(:channels AS text[])) "
        "AND lexeme = ANY(CAST(:lexemes AS text[])) GROUP BY lexeme",
        params,
    )
    docs = int(totals.docs)
    return Corpus(
        docs=docs,
        avg_len=max(1.0, float(totals.total) / docs) if docs else 1.0,
        df={str(row.lexeme): int(row.docs) for row in rows if int(row.docs) > 0},
    )


def fetching_terms(stats: Corpus, lexemes: Sequence[str], params: Bm25Params) -> list[str]:
    """The terms whose postings are read for candidates.

    All of them, except on large corpora the very common ones: a term in a fifth of the turns
    adds little to any score but would pull in a fifth of the corpus. Such terms still score
    the candidates the rarer terms fetch, and the rarest term always fetches.
    """
    present = sorted((t for t in lexemes if stats.df.get(t, 0) > 0), key=lambda t: stats.df[t])
    cap = max(params.common_floor, int(stats.docs * params.common_fraction))
    return [t for t in present if stats.df[t] <= cap] or present[:1]


_BM25F = """
WITH terms AS (
    SELECT * FROM unnest(CAST(:lexemes AS text[]), CAST(:weights AS float8[]))
        AS t (lexeme, weight)
),
hits AS MATERIALIZED (
    SELECT h.id, h.conversation_id, h.seq, h.search_tsv
    FROM dialog_turns h
    WHERE h.agent = :agent AND h.channel_id = ANY(CAST(:channels AS text[]))
        AND h.search_tsv @@ CAST(:fetch AS tsquery)
),
around AS (
    SELECT h.id AS hit_id, x.id, x.distance FROM hits h CROSS JOIN LATERAL (
        (SELECT p.id, row_number() OVER (ORDER BY p.seq DESC) AS distance
            FROM dialog_turns p WHERE p.conversation_id = h.conversation_id AND p.seq < h.seq
            ORDER BY p.seq DESC LIMIT :reach)
        UNION ALL
        (SELECT n.id, row_number() OVER (ORDER BY n.seq) AS distance
            FROM dialog_turns n WHERE n.conversation_id = h.conversation_id AND n.seq > h.seq
            ORDER BY n.seq LIMIT :reach)
    ) AS x
),
own AS (
    SELECT h.id, u.lexeme,
        (SELECT sum(CASE w WHEN 'A' THEN :w_text WHEN 'B' THEN :w_speaker ELSE :w_date END)
            FROM unnest(u.weights) AS w) AS tf,
        (SELECT count(*) FROM unnest(u.weights) AS w WHERE w = 'A') AS tf_text
    FROM hits h CROSS JOIN LATERAL unnest(h.search_tsv) AS u
    WHERE u.lexeme = ANY(CAST(:lexemes AS text[]))
),
spread AS (
    SELECT id, lexeme, tf FROM own
    UNION ALL
    SELECT a.id, o.lexeme,
        CASE a.distance WHEN 1 THEN :w_context ELSE :w_context_far END * o.tf_text
    FROM own o JOIN around a ON a.hit_id = o.id
    WHERE o.tf_text > 0
),
per_term AS (
    SELECT id, lexeme, sum(tf) AS tf FROM spread GROUP BY id, lexeme HAVING sum(tf) > 0
)
SELECT d.id, d.conversation_id,
    sum(t.weight * p.tf * (:k1 + 1)
        / (p.tf + :k1 * (1 - :b + :b * d.search_len / :avg_len))) AS score
FROM per_term p JOIN terms t USING (lexeme) JOIN dialog_turns d ON d.id = p.id
WHERE {filters}
GROUP BY d.id, d.conversation_id
ORDER BY score DESC, d.id DESC
LIMIT :limit
"""


async def lexical_candidates(
    session: AsyncSession,
    *,
    agent: str,
    channel_ids: Sequence[str],
    terms: dict[str, int],
    stats: Corpus,
    filters: Filters,
    params: Bm25Params,
    limit: int,
) -> dict[str, tuple[str, float]]:
    """The best turns by BM25F, as turn ID to (conversation ID, score)."""
    fetch = fetching_terms(stats, list(terms), params)
    if not fetch or not channel_ids:
        return {}
    lexemes = [t for t in terms if stats.df.get(t, 0) > 0]
    condition, bound = filters.sql("d")
    rows = await execute(
        session,
        _BM25F.replace("{filters}", condition),
        {
            "agent": agent,
            "channels": list(channel_ids),
            "fetch": tsquery_any(fetch),
            "lexemes": lexemes,
            "weights": [stats.idf(t) * terms[t] for t in lexemes],
            "w_text": params.w_text,
            "w_speaker": params.w_speaker,
            "w_date": params.w_date,
            "w_context": params.w_context,
            "w_context_far": params.w_context_far,
            "reach": 2 if params.w_context_far else 1,
            "k1": params.k1,
            "b": params.b,
            "avg_len": stats.avg_len,
            "limit": limit,
            **bound,
        },
    )
    return {str(r.id): (str(r.conversation_id), float(r.score)) for r in rows}
