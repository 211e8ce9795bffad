"""Retrieval of autobiographical memory into the prompt (spec §4 step 2), a context source.

For each input: find the channels whose memories this conversation may use, embed the input,
fetch the nearest records that pass the fences (see :mod:`store.queries.recall`), score them
(:mod:`activities.memory.ranking`), and hand them over best first. The assembler's ``fit``
keeps as many as the budget allows: at most ``retrieval_fraction`` of the window, and never
more than what the rest of the prompt leaves.

Memory is an enrichment: with the encoder down the same fenced records are ranked lexically,
and any other failure leaves the prompt without memories (the source is optional).
"""

from __future__ import annotations

import asyncio
import logging
import math
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from activities.context.fencing import MEMORY, fence
from activities.context.model import ContextBlock, ContextRequest, Trim
from activities.context.priming import Primed
from activities.memory import ranking
from activities.memory.encoder import Encoder
from activities.memory.levels import lift, to_lift
from activities.memory.lines import annotate, zone_of
from activities.memory.synthesis import deduplicated, marked
from activities.memory.synthesizer import RecallSynthesizer
from activities.prompts import load
from schemas.memory import MemorySettings
from schemas.recall import RecallMode, RelevanceSignals, RetrievedMemory, SurfacedMemories
from store.db import Database
from store.queries.recall import (
    Candidate,
    Fence,
    Ground,
    lexical_candidates,
    recall_ground,
    semantic_candidates_on,
    top_recollections,
)
from store.queries.supersession import Span, replaced_facts

log = logging.getLogger(__name__)

SOURCE_NAME = "memory"
"""The source's name: the key of its part in the prompt and of ``prompts.extra``."""

TOKENS_PER_RECORD = 40
"""A short summary with its annotation; sizes how many candidates could fill the budget."""

MAX_KEPT_PLACES = 10_000
"""Agents' channels remembered as keeping records, at most (each a few dozen bytes)."""

TRAJECTORY_LENGTH = 5
"""Emotion tags shown in the trajectory line, newest last."""


def rank(
    candidates: Sequence[Candidate],
    *,
    lexemes: Sequence[str],
    present: Sequence[str],
    now: datetime,
    settings: MemorySettings,
) -> list[RetrievedMemory]:
    """Score and band candidates; best first, ties broken by the newer record."""
    weights = ranking.Weights.from_settings(settings)
    bands = ranking.Bands.from_settings(settings)
    ranked: list[RetrievedMemory] = []
    for candidate in candidates:
        signals = RelevanceSignals(
            semantic=None if candidate.cosine is None else max(0.0, candidate.cosine),
            lexical=ranking.lexical_overlap(lexemes, candidate.lexemes),
            recency=ranking.recency(candidate.created_at, now, settings.recall_half_life_days),
            participants=ranking.participant_match(candidate.participants, present),
        )
        score = ranking.combine(signals, weights)
        ranked.append(
            RetrievedMemory(
                id=candidate.id,
                summary=candidate.summary,
                band=ranking.band(score, bands),
                score=score,
                created_at=candidate.created_at,
                emotion=candidate.emotion,
                signals=signals,
                level=candidate.level,
                first_at=candidate.first_at,
                last_at=candidate.last_at,
            )
        )
    ranked.sort(key=lambda memory: (memory.score, memory.id), reverse=True)
    return ranked


def trajectory(memories: Sequence[RetrievedMemory]) -> str | None:
    """The emotion tags of the newest shown memories, oldest to newest, or ``None``."""
    tagged = sorted((m for m in memories if m.emotion), key=lambda m: m.created_at)
    tags = [m.emotion for m in tagged[-TRAJECTORY_LENGTH:] if m.emotion]
    return " -> ".join(tags) if tags else None


class MemoryBlock(ContextBlock):
    """The memory block: its text and its ``extra`` always describe the records still in it.

    The assembler's ``fit`` drops items from the end after fetching; the title, the trajectory
    line and the stored list of surfaced records are therefore derived from the items that
    remain, never fixed at fetch time, so the provenance critic sees exactly what the model saw.
    """

    def __init__(
        self, *, surfaced: SurfacedMemories, share: float, timezone: str, order: int = 20
    ) -> None:
        zone = zone_of(timezone)
        super().__init__(
            source=SOURCE_NAME,
            items=[annotate(memory, zone) for memory in surfaced.records],
            order=order,
            trim=Trim.LAST_FIRST,
            share=share,
            provenance=MEMORY,
        )
        self._surfaced = surfaced

    def shown(self) -> list[RetrievedMemory]:
        """The records whose lines survived the budget, best first."""
        return self._surfaced.records[: len(self.items)]

    @property
    def extra(self) -> dict[str, Any]:
        """``SurfacedMemories`` of the records shown, as JSON (``prompts.extra["memory"]``)."""
        shown = self._surfaced.model_copy(update={"records": self.shown()})
        return shown.model_dump(mode="json")

    @extra.setter
    def extra(self, value: dict[str, Any]) -> None:
        # The dataclass initialiser assigns the base field; this block derives it instead.
        del value

    def render(self) -> str:
        """The header, then, fenced, the trajectory of the records shown and one line each.

        A summary is the agent's own paraphrase of what people said, so it may carry their
        words, instructions included: the records are material, never instructions. With a
        synthesis that still covers what is shown, the account stands for the lines it tells
        and the rest follow; once the budget drops a line it told, the lines stand alone.
        """
        told = self._surfaced.synthesized
        if self._surfaced.synthesis and 0 < told <= len(self.items):
            parts = [load("memory_synthesized.md"), fence(self._surfaced.synthesis, MEMORY)]
            if len(self.items) > told:
                parts += [
                    "More memories, one per line:",
                    fence("\n".join(self.items[told:]), MEMORY),
                ]
            return "\n".join(parts)
        lines = [load("memory_context.md")]
        if any(memory.level > 1 for memory in self.shown()):
            lines.append(load("memory_levels.md"))
        if self._surfaced.mode is RecallMode.LEXICAL:
            lines.append("(Matched by wording alone this time: the encoder was unavailable.)")
        recalled = list(self.items)
        feelings = trajectory(self.shown())
        if feelings:
            recalled.insert(0, f"How you felt in these memories, oldest to newest: {feelings}.")
        return "\n".join([*lines, fence("\n".join(recalled), MEMORY)])


def quoted(candidate: Candidate, verbatim: Sequence[Sequence[str]]) -> bool:
    """Whether ``candidate`` remembers only turns inside one run of ``verbatim`` turn IDs."""
    first, last = candidate.turn_first, candidate.turn_last
    if first is None or last is None:
        return False
    return any(first in run and last in run for run in verbatim)


@dataclass(frozen=True)
class _Grounded:
    """Recall's ground and the input's embedding, started (``None``: nothing to rank)."""

    ground: Ground
    vector: asyncio.Future[list[float] | None] | None


class MemoryRecall:
    """The memory context source.

    Args:
        db: The database.
        encoder: Embeds the input; unavailable or slow, ranking falls back to words.
        settings: Weights, half-life, bands, candidate counts and the budget fraction.
    """

    name = SOURCE_NAME
    required = False

    def __init__(
        self,
        db: Database,
        encoder: Encoder,
        settings: MemorySettings,
        synthesizer: RecallSynthesizer | None = None,
    ) -> None:
        self._db = db
        self._encoder = encoder
        self._settings = settings
        self._synthesizer = synthesizer
        self._primed: Primed[_Grounded] = Primed()
        # Agents and channels whose last ground kept something: their question is embedded
        # beside the ground read, not after it (records are rarely all forgotten at once).
        self._keeps: set[tuple[str, str]] = set()

    def candidate_limit(self, context_window: int) -> int:
        """How many candidates to fetch: enough to fill the budget, within the set bounds."""
        budget = self._settings.retrieval_fraction * context_window
        wanted = math.ceil(budget / TOKENS_PER_RECORD)
        return max(
            self._settings.recall_candidates, min(self._settings.recall_max_candidates, wanted)
        )

    async def _embed(self, text: str) -> list[float] | None:
        try:
            async with asyncio.timeout(self._settings.recall_encode_timeout_seconds):
                vectors = await self._encoder.encode([text])
        except Exception as err:  # unavailable, slow or broken: words still rank
            log.warning("recall ranks lexically: the encoder failed (%s)", err)
            return None
        return vectors[0] if vectors else None

    def prime(self, *, agent: str, channel_key: str, query: str) -> None:
        """Start what :meth:`recall` needs of the agent, channel and text alone, for a recall soon.

        Admission calls it before it writes the person's turn, so the channels, the lexemes and
        the input's embedding are ready when the context is assembled (``activities.admission``).
        """
        self._primed.start(
            (agent, channel_key, query), lambda: self._ground(agent, channel_key, query)
        )

    async def _grounded(self, agent: str, channel_key: str, query: str) -> _Grounded:
        """The primed ground for these inputs if there is one that worked, else read now."""
        primed = self._primed.take((agent, channel_key, query))
        if primed is not None:
            try:
                return await primed
            except Exception as err:  # read again below, where a failure is the source's
                log.warning("recall reads again: its early read failed (%s)", err)
        return await self._ground(agent, channel_key, query)

    async def _ground(self, agent: str, channel_key: str, query: str) -> _Grounded:
        """One round trip, and the input's embedding if there is anything to rank.

        Where the last ground kept something the embedding starts beside the read; elsewhere
        after it, and only if the read finds something, so a new agent never pays for it.
        """
        where = (agent, channel_key)
        early = asyncio.ensure_future(self._embed(query)) if where in self._keeps else None
        try:
            ground = await recall_ground(
                self._db.lane, agent=agent, channel_key=channel_key, query=query
            )
        except BaseException:
            if early is not None:
                early.cancel()
            raise
        if not ground.anything:
            self._keeps.discard(where)
            if early is not None:
                early.cancel()  # all forgotten since: the vector is not wanted
            return _Grounded(ground, None)
        if len(self._keeps) >= MAX_KEPT_PLACES:
            self._keeps.clear()  # bounded: the next recall of each reads first again
        self._keeps.add(where)
        return _Grounded(ground, early or asyncio.ensure_future(self._embed(query)))

    async def recall(
        self,
        *,
        agent: str,
        channel_key: str,
        present: Sequence[str],
        query: str,
        now: datetime,
        context_window: int,
        verbatim: Sequence[Sequence[str]] = (),
    ) -> SurfacedMemories | None:
        """The visible memories ranked for ``query``, or ``None`` when there are none.

        ``verbatim``: runs of consecutive turn IDs the prompt quotes whole (the window, the
        pinned opening); a memory of turns all inside one of them is not surfaced again.
        """
        grounded = await self._grounded(agent, channel_key, query)
        ground = grounded.ground
        if not ground.anything:
            return None
        fence = Fence(agent=agent, channel_ids=ground.channel_ids, present=present)
        lexemes = ground.lexemes
        limit = self.candidate_limit(context_window)
        vector = await grounded.vector if grounded.vector is not None else None
        candidates: list[Candidate] = []
        if vector is not None:
            # On the lane, in a transaction of its own for its SET LOCAL index options.
            candidates = await semantic_candidates_on(
                self._db.lane,
                fence,
                vector=vector,
                model=self._encoder.name,
                limit=limit,
                ef_search=max(self._settings.recall_ef_search, limit),
            )
        if not candidates:
            # No vector, or no record embedded by this encoder (formed while it was down).
            vector = None
            async with self._db.autocommit() as session:
                candidates = await lexical_candidates(session, fence, lexemes=lexemes, limit=limit)
        if not candidates:
            # The lexical search returns every visible record it may: none passes the fences.
            return None
        admitted = [
            c
            for c in candidates
            if c.channel_id in fence.channel_ids
            and ranking.visible(c.sensitivity, c.participants, present)
        ]
        if len(admitted) < len(candidates):
            # The SQL fences and these rules disagree: a bug, and never a reason to leak.
            log.error(
                "recall held back %d records the fences let through",
                len(candidates) - len(admitted),
            )
        # A memory of turns the prompt quotes word for word says them twice: left out.
        admitted = [c for c in admitted if not quoted(c, verbatim)]
        records = rank(admitted, lexemes=lexemes, present=present, now=now, settings=self._settings)
        records = await self._marked(agent, records, admitted, present)
        records = await self._lifted(
            records, admitted, fence, lexemes=lexemes, present=present, now=now
        )
        return SurfacedMemories(
            mode=RecallMode.SEMANTIC if vector is not None else RecallMode.LEXICAL,
            records=records,
            candidates=len(admitted),
        )

    async def _lifted(
        self,
        records: list[RetrievedMemory],
        admitted: Sequence[Candidate],
        fence: Fence,
        *,
        lexemes: Sequence[str],
        present: Sequence[str],
        now: datetime,
    ) -> list[RetrievedMemory]:
        """``records`` with folded matches shown through their highest recollection."""
        lifting = to_lift(records, {c.id: c.folded_into is not None for c in admitted})
        if not lifting:  # nothing folded matched: no round trip
            return records
        async with self._db.autocommit() as session:
            tops = await top_recollections(session, fence, record_ids=lifting)
        ranked = rank(
            list({c.id: c for c in tops.values()}.values()),
            lexemes=lexemes,
            present=present,
            now=now,
            settings=self._settings,
        )
        by_id = {memory.id: memory for memory in ranked}
        return lift(records, {start: by_id[top.id] for start, top in tops.items()})

    async def _marked(
        self,
        agent: str,
        records: list[RetrievedMemory],
        admitted: Sequence[Candidate],
        present: Sequence[str],
    ) -> list[RetrievedMemory]:
        """``records`` with the facts they hold that were replaced since said on their lines."""
        turns = {c.id: (c.turn_first, c.turn_last) for c in admitted}
        spans = [
            Span(r.id, first, last)
            for r in records
            if (first := turns[r.id][0]) is not None and (last := turns[r.id][1]) is not None
        ]
        if not spans:  # nothing to look up: no round trip
            return records
        replaced = await replaced_facts(self._db.lane, agent=agent, spans=spans, present=present)
        return marked(records, replaced)

    async def fetch(self, request: ContextRequest) -> ContextBlock | None:
        """The memory block for this input, or ``None`` when nothing may be recalled."""
        data = request.input
        surfaced = await self.recall(
            agent=data.agent,
            channel_key=data.channel.key,
            present=sorted({*data.participants, data.person_id}),
            query=data.event.text,
            now=data.now,
            context_window=request.binding.context_window,
            verbatim=[data.window_turn_ids, data.opening_turn_ids],
        )
        if surfaced is None or not surfaced.records:
            return None
        # The prompt's block says each thing once; recall itself (search, the leak rules'
        # tests) still returns every record it may.
        surfaced = surfaced.model_copy(update={"records": deduplicated(surfaced.records)})
        zone = request.agent.config.timezone
        if self._synthesizer is not None and self._synthesizer.wanted(surfaced.records):
            told = await self._synthesizer.synthesize(
                surfaced.records,
                query=data.event.text,
                agent_name=request.agent.name,
                zone=zone_of(zone),
            )
            if told is not None:
                surfaced = surfaced.model_copy(
                    update={"synthesis": told[0], "synthesized": told[1]}
                )
        return MemoryBlock(
            surfaced=surfaced, share=self._settings.retrieval_fraction, timezone=zone
        )
