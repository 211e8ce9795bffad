"""Dialog search: filters over stored dialog, ranked by BM25F fused with semantic similarity.

Keyword, regular-expression, date-range, tag and channel filters (spec §4.6, §6) narrow what
is ranked; the ranking mixes lexical and semantic evidence (see ``fusion``).

Search never fails because the encoder is away: it ranks by BM25 alone and says so.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from sqlalchemy.exc import DBAPIError
from sqlmodel.ext.asyncio.session import AsyncSession

from activities.memory.encoder import Encoder, EncoderUnavailableError
from activities.memory.encoders.dimensions import stored_dimensions
from activities.memory.search.fusion import Candidate, FusionParams, fuse
from schemas.memory_search import DialogHit, DialogSearchQuery, DialogSearchResult
from store.db import Database
from store.queries import search as sql
from store.queries.search import Bm25Params, Filters, SearchInputError

SEARCH_TIMEOUT_SECONDS = 5.0
"""Longest any one search statement may run; a pattern that explodes is cancelled here."""

SIZE_CHECK_SECONDS = 60.0
"""How long a check of the stored vectors' size holds (a reindex may run meanwhile)."""


class SearchTimeoutError(SearchInputError):
    """The search ran out of time (nearly always an expensive regular expression)."""


class DialogSearch:
    """Searches an agent's stored dialog.

    Args:
        db: The database.
        encoder: Encodes the query for the semantic half; ``None`` searches lexically only.
        bm25: Lexical ranking weights.
        fusion: How lexical and semantic scores mix.
        timeout_seconds: Statement timeout of every search query.
    """

    def __init__(
        self,
        db: Database,
        encoder: Encoder | None,
        *,
        bm25: Bm25Params | None = None,
        fusion: FusionParams | None = None,
        timeout_seconds: float = SEARCH_TIMEOUT_SECONDS,
    ) -> None:
        self._db = db
        self._encoder = encoder
        self._bm25 = bm25 or Bm25Params()
        self._fusion = fusion or FusionParams()
        self._timeout = timeout_seconds
        self._vectors_fit: tuple[bool, float] | None = None

    async def search(
        self,
        agent: str,
        query: str = "",
        *,
        channel_ids: Sequence[str] | None = None,
        keyword: str | None = None,
        regex: str | None = None,
        since: datetime | None = None,
        until: datetime | None = None,
        tags: Sequence[str] = (),
        limit: int = 10,
    ) -> list[DialogHit]:
        """The best-matching turns (see :class:`DialogSearchQuery` for each argument).

        Raises:
            SearchInputError: Unknown agent or channel, bad pattern, or a search that timed out.
            pydantic.ValidationError: Arguments out of range (since after until, ...).
        """
        spec = DialogSearchQuery(
            agent=agent,
            query=query,
            channel_ids=list(channel_ids) if channel_ids is not None else None,
            keyword=keyword,
            regex=regex,
            since=since,
            until=until,
            tags=list(tags),
            limit=limit,
        )
        return (await self.run(spec)).hits

    async def run(self, spec: DialogSearchQuery) -> DialogSearchResult:
        """Run a validated query.

        Raises:
            SearchInputError: Unknown agent or channel, bad pattern, or a search that timed out.
        """
        ranking = spec.ranking_text
        vector, notice = await self._encode(ranking) if ranking else (None, None)
        filters = Filters(
            since=spec.since,
            until=spec.until,
            tags=spec.tags,
            keyword=spec.keyword,
            regex=spec.regex,
        )
        try:
            async with self._db.session() as session:
                await sql.set_timeout(session, self._timeout)
                channels = await sql.scope(session, agent=spec.agent, channel_ids=spec.channel_ids)
                await sql.check_patterns(session, filters)
                if not ranking:
                    ids = await sql.listing(
                        session,
                        agent=spec.agent,
                        channel_ids=list(channels),
                        filters=filters,
                        limit=spec.limit,
                    )
                    ranked = [Candidate(turn_id=i, conversation_id="") for i in ids]
                else:
                    ranked, vector, notice = await self._rank(
                        session, spec, ranking, vector, notice, list(channels), filters
                    )
                rows = await sql.turn_rows(session, turn_ids=[c.turn_id for c in ranked])
        except DBAPIError as err:
            if _cancelled(err):
                raise SearchTimeoutError(_timeout_message(spec, self._timeout)) from None
            raise
        hits = [_hit(rows[c.turn_id], c, channels) for c in ranked if c.turn_id in rows]
        return DialogSearchResult(
            hits=hits, lexical_only=bool(ranking) and vector is None, notice=notice
        )

    async def _encode(self, ranking: str) -> tuple[list[float] | None, str | None]:
        if self._encoder is None:
            return None, "no encoder: ranked by keywords alone"
        now = time.monotonic()
        if self._vectors_fit is None or now - self._vectors_fit[1] > SIZE_CHECK_SECONDS:
            size = (await stored_dimensions(self._db)).get("dialog_turns.embedding")
            self._vectors_fit = (size is None or size == self._encoder.dimensions, now)
        if not self._vectors_fit[0]:
            return None, "stored vectors do not fit the encoder: run `persyn memory reindex`"
        try:
            return (await self._encoder.encode([ranking]))[0], None
        except EncoderUnavailableError as err:
            return None, f"{err}: ranked by keywords alone"

    async def _rank(
        self,
        session: AsyncSession,
        spec: DialogSearchQuery,
        ranking: str,
        vector: list[float] | None,
        notice: str | None,
        channels: list[str],
        filters: Filters,
    ) -> tuple[list[Candidate], list[float] | None, str | None]:
        """Candidates from both rankings, fused; the vector is dropped if nothing had one."""
        candidates: dict[str, Candidate] = {}
        terms = await sql.query_terms(session, ranking)
        stats = await sql.corpus(
            session, agent=spec.agent, channel_ids=channels, lexemes=list(terms)
        )
        lexical = bool(terms) and bool(stats.df)
        if lexical:
            found = await sql.lexical_candidates(
                session,
                agent=spec.agent,
                channel_ids=channels,
                terms=terms,
                stats=stats,
                filters=filters,
                params=self._bm25,
                limit=max(self._fusion.lexical_pool, 5 * spec.limit),
            )
            for turn_id, (conversation_id, score) in found.items():
                candidates[turn_id] = Candidate(turn_id, conversation_id, lexical=score)
        if vector is not None and self._encoder is not None:
            near = await sql.semantic_candidates(
                session,
                agent=spec.agent,
                channel_ids=channels,
                vector=vector,
                model=self._encoder.name,
                filters=filters,
                limit=max(self._fusion.semantic_pool, 2 * spec.limit),
            )
            for turn_id, (conversation_id, _) in near.items():
                candidates.setdefault(turn_id, Candidate(turn_id, conversation_id))
            if not near:
                # Nothing searched has an embedding yet (imported without one, or written live).
                vector = None
                notice = "no matching turn has an embedding yet (run `persyn memory index`)"
        features = await sql.turn_features(
            session,
            turn_ids=list(candidates),
            vector=vector,
            model=self._encoder.name if self._encoder is not None else "",
            lexemes=list(terms),
        )
        for turn_id, found_features in features.items():
            candidate = candidates[turn_id]
            candidate.semantic = found_features.cosine
            candidate.neighbour_semantic = found_features.neighbour_cosine
            candidate.speaker_named = found_features.speaker_named
        ranked = fuse(candidates, self._fusion, lexical=lexical, semantic=vector is not None)
        return ranked[: spec.limit], vector, notice


def _cancelled(err: DBAPIError) -> bool:
    return getattr(err.orig, "sqlstate", None) == "57014"  # query_canceled


def _timeout_message(spec: DialogSearchQuery, seconds: float) -> str:
    if spec.regex:
        return (
            f"the search took longer than {seconds:g} s, most likely the regular expression: "
            "simplify it or narrow the search with --since/--until or --channel"
        )
    return f"the search took longer than {seconds:g} s: narrow it with --since/--until or --channel"


def _hit(row: Any, ranked: Candidate, channels: dict[str, str]) -> DialogHit:
    return DialogHit(
        turn_id=row.id,
        conversation_id=row.conversation_id,
        channel_id=row.channel_id,
        channel=channels.get(row.channel_id, ""),
        role=row.role,
        speaker_id=row.speaker_id,
        speaker_name=row.speaker_name,
        text=row.text,
        at=row.at,
        tags=list(row.tags or []),
        source_ref=row.source_ref,
        score=round(ranked.score, 6),
        lexical=round(ranked.lexical, 6),
        semantic=round(ranked.semantic, 6) if ranked.semantic is not None else None,
    )
