"""Folding: records of one level become one recollection of the next (Connectome's levels).

One ``fold`` task call reads the batch's records, oldest first and each fenced with its date,
and the stream's previous recollection of the same level (how the stretch before looked from
its end), and writes one first-person recollection as of the batch's end. Nothing later than
the batch reaches the prompt. Where the plan does not run the task (the built-in tiny model),
or its reply does not fit the schema twice, the recollection is written without a model: the
opening of each record, most important first (:func:`plain_fold`).

The recollection shares its records' fences (channel, sensitivity, participants), takes their
highest importance, their commonest emotion and tags, and spans their time; its
``derived_from`` lists them (the link down) and each of them points up to it (``folded_into``).
The chronicle, the raw dialog, is never touched.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Sequence
from datetime import datetime

from pydantic import BaseModel, ConfigDict, Field, ValidationError
from sqlalchemy.exc import DBAPIError
from temporalio import activity

from activities.context.fencing import MEMORY, fence
from activities.gateway.errors import to_application_error
from activities.gateway.gateway import ModelGateway
from activities.heartbeating import heartbeating
from activities.memory.encoder import Encoder, encode_or_none
from activities.memory.formation.calls import read_reply
from activities.prompts import load
from contract.provider_errors import ProviderError
from schemas.folding import FoldBatch, FoldInput, FoldMode, FoldPlan, FoldPlanInput, FoldResult
from schemas.memory import MemorySettings
from schemas.models import ChatMessage, ModelRequest, TaskType
from schemas.text import InvalidTextError, clean_text
from store.db import Database
from store.queries.folding import (
    FoldSource,
    batch_sources,
    folded_by,
    previous_recollection,
    ready_batches,
    store_fold,
)
from store.queries.memory import NewRecord
from store.tables import Agent
from store.tables.columns import utcnow

log = logging.getLogger(__name__)

TASK = TaskType.FOLD
ATTEMPTS = 2
ENCODE_TIMEOUT_S = 10.0
MAX_TAGS = 8
OPENING_CHARS = 160
"""Most of one record a plain recollection keeps: its first sentence, cut at a word."""


class FoldReply(BaseModel):
    """The ``fold`` task's answer."""

    model_config = ConfigDict(extra="forbid")

    summary: str = Field(min_length=1, max_length=8000)


def _day(when: datetime) -> str:
    return f"{when:%Y-%m-%d}"


def fold_request(
    sources: Sequence[FoldSource],
    previous: FoldSource | None,
    *,
    agent_name: str,
    max_chars: int,
) -> ModelRequest:
    """Ask for the recollection of ``sources``; only they and ``previous`` are shown."""
    start, end = sources[0].first_at, sources[-1].last_at
    system = (
        load("memory/fold.md")
        .replace("{name}", agent_name)
        .replace("{count}", str(len(sources)))
        .replace("{start}", _day(start))
        .replace("{end}", _day(end))
        .replace("{chars}", str(max_chars))
    )
    lines = "\n".join(
        f"- [{_day(s.first_at)}] {' '.join(s.record.summary.split())}" for s in sources
    )
    parts = []
    if previous is not None:
        parts.append(
            f"How the stretch before looked to you, up to {_day(previous.last_at)}:\n"
            + fence(previous.record.summary, MEMORY)
        )
    parts.append(f"Your memories from {_day(start)} to {_day(end)}:\n" + fence(lines, MEMORY))
    return ModelRequest(
        task=TASK,
        system=system,
        messages=[ChatMessage(role="user", content="\n\n".join(parts))],
        temperature=0.0,
        response_schema=FoldReply.model_json_schema(),
    )


def sentences(text: str) -> list[str]:
    """``text`` cut into sentences; a quotation stays whole (``Max said: "...! ..."``)."""
    found: list[str] = []
    current: list[str] = []
    quoted = False
    words = " ".join(text.split()).split(" ")
    for word in words:
        current.append(word)
        quoted ^= word.count('"') % 2 == 1
        if not quoted and word.rstrip('"').endswith((".", "!", "?")):
            found.append(" ".join(current))
            current = []
    if current and any(current):
        found.append(" ".join(current))
    return found


def _cut(sentence: str) -> str:
    if len(sentence) <= OPENING_CHARS:
        return sentence
    cut = sentence[:OPENING_CHARS].rsplit(" ", 1)[0].rstrip(",;:") + "..."
    return cut + '"' if cut.count('"') % 2 else cut


def plain_fold(sources: Sequence[FoldSource], *, max_chars: int) -> str:
    """A recollection without a model: the dates, what its records share, what each says.

    A sentence most records share (the plain record's "I talked with Max on terminal:tty.") is
    said once, after the dates; then each record gives its first sentence of its own, most
    important first, as many as fit ``max_chars``. The details blur; the records below keep them.
    """
    start, end = _day(sources[0].first_at), _day(sources[-1].last_at)
    cut = [sentences(s.record.summary) for s in sources]
    shared = Counter(sentence for own in cut for sentence in set(own))
    common = [
        sentence
        for sentence in dict.fromkeys(sentence for own in cut for sentence in own)
        if shared[sentence] > 1 and 2 * shared[sentence] >= len(sources)
    ]
    text = f"From {start} to {end}, {len(sources)} memories."
    for sentence in common:
        if len(f"{text} {sentence}") <= max_chars:
            text = f"{text} {sentence}"
    ranked = sorted(
        zip(sources, cut, strict=True), key=lambda p: (-p[0].record.importance, p[0].record.id)
    )
    for _, own in ranked:
        told = next((s for s in own if s not in common), None)
        if told is None:
            continue
        told = _cut(told)
        candidate = f"{text} {told}" if told[-1] in '.!?"' else f"{text} {told}."
        if len(candidate) > max_chars:
            break
        text = candidate
    return text


def checked_summary(text: str, *, max_chars: int) -> str | None:
    """The model's recollection if it may be stored: storable, not empty, cut to size."""
    try:
        cleaned = clean_text(" ".join(text.split()), what="a recollection", max_chars=100_000)
    except InvalidTextError:
        return None
    if not cleaned:
        return None
    if len(cleaned) > max_chars:
        cleaned = cleaned[:max_chars].rsplit(" ", 1)[0] + "..."
    return cleaned


def recollection(
    batch: FoldBatch,
    sources: Sequence[FoldSource],
    *,
    recollection_id: str,
    summary: str,
    mode: FoldMode,
    vector: list[float] | None,
    embed_model: str | None,
) -> NewRecord:
    """The record that folds ``sources``: their fences, their span, their strongest traits."""
    first = sources[0].record
    emotions = Counter(s.record.emotion for s in sources if s.record.emotion)
    tags = Counter(tag for s in sources for tag in s.record.tags)
    return NewRecord(
        id=recollection_id,
        agent=batch.agent,
        channel_id=first.channel_id,
        conversation_id=None,
        summary=summary,
        importance=max(s.record.importance for s in sources),
        created_at=utcnow(),
        tags=[tag for tag, _ in tags.most_common(MAX_TAGS)],
        emotion=emotions.most_common(1)[0][0] if emotions else None,
        sensitivity=first.sensitivity.value,
        participants=sorted(first.participants),
        turn_first_at=min(s.first_at for s in sources),
        turn_last_at=max(s.last_at for s in sources),
        derived_from=[s.record.id for s in sources],
        rubric={"folded": len(sources), "mode": mode.value},
        embedding=vector,
        embed_model=embed_model if vector is not None else None,
        level=batch.level + 1,
    )


class FoldingActivities:
    """The folding pass's steps: plan the batches, fold one."""

    def __init__(
        self,
        db: Database,
        gateway: ModelGateway,
        encoder: Encoder | None,
        settings: MemorySettings,
    ) -> None:
        self._db = db
        self._gateway = gateway
        self._encoder = encoder
        self._settings = settings

    @activity.defn(name="memory.fold_plan")
    async def fold_plan(self, data: FoldPlanInput) -> FoldPlan:
        """The batches ready to fold now (none when folding is off: ``fold_levels`` 1)."""
        if self._settings.fold_levels <= 1:
            return FoldPlan()
        async with self._db.autocommit() as session:
            batches = await ready_batches(
                session,
                agent=data.agent,
                threshold=self._settings.fold_threshold,
                levels=self._settings.fold_levels,
                limit=data.limit,
            )
        return FoldPlan(batches=batches)

    @activity.defn(name="memory.fold")
    async def fold(self, data: FoldInput) -> FoldResult:
        """Write one recollection and link its records up to it; a retry finds its write."""
        batch = data.batch
        async with self._db.autocommit() as session:
            if await folded_by(session, recollection_id=data.recollection_id):
                return FoldResult(recollection_id=data.recollection_id, level=batch.level + 1)
            agent = await session.get(Agent, batch.agent)
            sources = await batch_sources(session, batch)
            if agent is None or len(sources) < len(batch.records):
                return FoldResult(skipped="a record was folded or withdrawn since it was planned")
            previous = await previous_recollection(
                session, first=sources[0].record, level=batch.level + 1, before=sources[0].first_at
            )
        async with heartbeating():
            summary, mode = await self._write(sources, previous, agent_name=agent.name)
            vector = await encode_or_none(self._encoder, summary, timeout_s=ENCODE_TIMEOUT_S)
        record = recollection(
            batch,
            sources,
            recollection_id=data.recollection_id,
            summary=summary,
            mode=mode,
            vector=vector,
            embed_model=self._encoder.name if self._encoder is not None else None,
        )
        try:
            stored = await self._store(record, batch)
        except DBAPIError:
            if vector is None:
                raise
            # A vector the column cannot hold (the encoder changed size): stored bare, filled
            # by maintenance, rather than lost.
            log.warning("recollection vector rejected; storing %s without one", record.id)
            stored = await self._store(NewRecord(**{**record.__dict__, "embedding": None}), batch)
        if not stored:
            return FoldResult(skipped="a record was folded or withdrawn while folding")
        return FoldResult(recollection_id=record.id, level=record.level, mode=mode)

    async def _store(self, record: NewRecord, batch: FoldBatch) -> bool:
        async with self._db.session() as session:
            if await store_fold(session, recollection=record, records=batch.records):
                await session.commit()
                return True
            await session.rollback()
            return False

    async def _write(
        self, sources: Sequence[FoldSource], previous: FoldSource | None, *, agent_name: str
    ) -> tuple[str, FoldMode]:
        max_chars = self._settings.fold_chars
        if self._gateway.runs(TASK):
            request = fold_request(sources, previous, agent_name=agent_name, max_chars=max_chars)
            for attempt in range(1, ATTEMPTS + 1):
                try:
                    response = await self._gateway.complete(request)
                except ProviderError as err:
                    raise to_application_error(err) from err
                try:
                    reply = read_reply(response.text, FoldReply)
                except ValidationError:
                    log.warning("fold reply did not fit its schema (%d of %d)", attempt, ATTEMPTS)
                    continue
                summary = checked_summary(reply.summary, max_chars=max_chars)
                if summary is not None:
                    return summary, FoldMode.MODEL
        return plain_fold(sources, max_chars=max_chars), FoldMode.PLAIN
