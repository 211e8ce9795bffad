"""Consolidation activities: a range of dialog becomes a first-person memory record.

Each step reads the range's turns from PostgreSQL by ID and keeps its result in the range's
formation row, so a retried step finds its work done and workflow history carries IDs only.
Steps: claim (register the range, pick up earlier failures) -> summarize (SUMMARIZE) -> rate
(RATE) and classify (CLASSIFY) -> store (embed, insert). A plan that does not run SUMMARIZE or
RATE (a model too small to judge) gets the plain record and the fixed rubric instead
(``activities.memory.formation.plain``). The encoder is optional everywhere: a
record is stored without a vector when it is away, and a later pass fills the vector in.
"""

from __future__ import annotations

import logging
import secrets
from datetime import UTC, datetime
from typing import Any

from sqlalchemy.exc import DBAPIError
from temporalio import activity
from temporalio.exceptions import ApplicationError

from activities.gateway.gateway import ModelGateway
from activities.memory.encoder import Encoder, encode_or_none
from activities.memory.explicit import ASKED_IMPORTANCE, asked_to_remember
from activities.memory.formation import calls, prompts
from activities.memory.formation.checks import refusal
from activities.memory.formation.plain import plain_rating, plain_summary
from schemas.ids import ulid_from_parts
from schemas.memory import Emotion, MemorySettings, Sensitivity, channel_floor, stricter
from schemas.memory_formation import (
    ClaimedFormations,
    ClaimFormationsInput,
    ClassificationDone,
    ClassificationReply,
    EmotionDistribution,
    FormationFailure,
    FormationSettings,
    FormationSettingsQuery,
    FormationStep,
    PredecessorsPending,
    RatingDone,
    RatingReply,
    StoredMemory,
    SummaryDone,
    SummaryReply,
)
from schemas.models import TaskType
from schemas.records import Done
from store.db import Database
from store.queries import memory_formation as ledger
from store.queries.memory import NewRecord, insert_record
from store.tables import Channel

log = logging.getLogger(__name__)

UNCLASSIFIED = ClassificationReply(
    emotions=EmotionDistribution(), sensitivity=Sensitivity.PRIVATE, tags=[]
)
"""A memory whose classification the model could not give: neutral, private, untagged."""

PLAIN_CHARS = 600
"""The plain record's length when the plan sets none."""

ENCODE_TIMEOUT_S = 30.0
"""Longest a record waits for its vector before it is stored without one."""


def _now() -> datetime:
    return datetime.now(UTC)


class ConsolidationActivities:
    """Memory formation: model calls through the gateway, vectors from the encoder."""

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

    @activity.defn(name="memory.formation_settings")
    async def formation_settings(self, data: FormationSettingsQuery) -> FormationSettings:
        """When a running conversation should consolidate."""
        return FormationSettings(
            chunk_tokens=self._settings.chunk_tokens, chunk_turns=self._settings.chunk_turns
        )

    @activity.defn(name="memory.claim")
    async def claim(self, data: ClaimFormationsInput) -> ClaimedFormations:
        """Register this run's range and claim earlier failed ranges of the agent."""
        async with self._db.session() as session:
            formations = await ledger.claim(
                session,
                consolidation_id=data.consolidation_id,
                agent=data.agent,
                channel_key=data.channel.key if data.channel else None,
                turn_range=data.range,
                pickup_limit=data.pickup_limit,
                now=_now(),
            )
        return ClaimedFormations(formations=formations)

    @activity.defn(name="memory.predecessors")
    async def predecessors(self, data: FormationStep) -> PredecessorsPending:
        """How many earlier ranges of the same compartment other runs are still forming."""
        async with self._db.session() as session:
            running = await ledger.running_predecessors(
                session, formation_id=data.formation_id, now=_now()
            )
        return PredecessorsPending(running=running)

    async def _context(
        self, formation_id: str, *, need_summary: bool
    ) -> tuple[Any, prompts.Voice, list[ledger.RangeTurn], list[ledger.EarlierMemory]]:
        """The formation row, whose voice, its turns, and the memories before them."""
        async with self._db.session() as session:
            row = await ledger.load(session, formation_id=formation_id)
            if row is None:
                raise ApplicationError(
                    f"formation {formation_id} is missing",
                    type="FormationMissing",
                    non_retryable=True,
                )
            if need_summary and row.summary is None:
                raise ApplicationError(
                    f"formation {formation_id} has no summary yet",
                    type="FormationOutOfOrder",
                    non_retryable=True,
                )
            turns = await ledger.range_turns(
                session,
                conversation_id=row.conversation_id,
                after_turn=row.after_turn,
                through_turn=row.through_turn,
            )
            voice = await self._voice(session, row)
            earlier: list[ledger.EarlierMemory] = []
            if turns:
                earlier = await ledger.earlier_memories(
                    session,
                    agent=row.agent,
                    channel_ids=await ledger.compartment(session, channel_id=row.channel_id),
                    present=ledger.as_text_list(row.participants),
                    before=turns[0].at,
                    budget_tokens=self._settings.formation_context_tokens,
                )
                if need_summary:
                    # Rating and classifying see exactly what the summary saw.
                    chosen = set(ledger.as_text_list(row.derived_from))
                    earlier = [m for m in earlier if m.id in chosen]
        return row, voice, turns, earlier

    def _budget(self, task: TaskType) -> int | None:
        """The call plan's budget for the dialog quoted to ``task`` (None: no budget)."""
        return calls.stage_plan(self._gateway, task).max_transcript_tokens

    async def _voice(self, session: Any, row: Any) -> prompts.Voice:
        agent = await ledger.agent_voice(session, agent=row.agent, channel_id=row.channel_id)
        return prompts.Voice(
            name=agent.name, persona=agent.persona, timezone=agent.timezone, channel=agent.channel
        )

    @activity.defn(name="memory.summarize")
    async def summarize(self, data: FormationStep) -> SummaryDone:
        """Write the first-person summary of the range, as of its moment."""
        row, voice, turns, earlier = await self._context(data.formation_id, need_summary=False)
        if row.summary is not None:
            return SummaryDone(
                formation_id=data.formation_id,
                turns=row.turns,
                earlier_memories=len(row.derived_from or []),
                reused=True,
            )
        if not turns:
            await self._update(data.formation_id, status="empty", turns=0)
            return SummaryDone(formation_id=data.formation_id, turns=0)
        if self._gateway.registry.runs(TaskType.SUMMARIZE):
            summary = await self._summary(voice, turns, earlier)
        else:  # a model too small to summarise: the plain record, built on no earlier memory
            stage = calls.stage_plan(self._gateway, TaskType.SUMMARIZE)
            summary = plain_summary(
                turns, channel=voice.channel, max_chars=stage.max_string_chars or PLAIN_CHARS
            )
            earlier = []
        await self._update(
            data.formation_id,
            summary=summary,
            derived_from=[m.id for m in earlier],
            turns=len(turns),
            turn_first=turns[0].id,
            turn_last=turns[-1].id,
            turn_first_at=turns[0].at,
            turn_last_at=turns[-1].at,
            participants=sorted({t.person_id for t in turns if t.person_id}),
        )
        return SummaryDone(
            formation_id=data.formation_id, turns=len(turns), earlier_memories=len(earlier)
        )

    async def _summary(
        self, voice: prompts.Voice, turns: list[ledger.RangeTurn], earlier: list[Any]
    ) -> str:
        """The model's first-person summary, refused when it is not a recollection."""
        request = prompts.summary_request(
            voice, turns, earlier, transcript_tokens=self._budget(TaskType.SUMMARIZE)
        )
        reply = await calls.complete_json(self._gateway, request, SummaryReply)
        summary = reply.summary.strip()
        refused = refusal(summary, turns)
        if refused is not None:
            # As a reply that misses its schema: tried once more, then left for later.
            raise ApplicationError(
                f"the summary {refused}",
                type="ModelReplyInvalid",
                non_retryable=activity.in_activity() and activity.info().attempt >= 2,
            )
        return summary

    @activity.defn(name="memory.rate")
    async def rate(self, data: FormationStep) -> RatingDone:
        """Rate the memory's importance 1-10 against the rubric."""
        row, voice, turns, earlier = await self._context(data.formation_id, need_summary=True)
        if row.importance is not None:
            return RatingDone(formation_id=data.formation_id, importance=row.importance)
        if self._gateway.registry.runs(TaskType.RATE):
            importance, rubric = await self._model_rating(voice, row.summary, turns, earlier)
        else:  # a model too small to judge: the fixed rubric
            importance, rubric = plain_rating(turns)
        await self._update(data.formation_id, importance=importance, rubric=rubric)
        return RatingDone(formation_id=data.formation_id, importance=importance)

    async def _model_rating(
        self, voice: prompts.Voice, summary: str, turns: list[ledger.RangeTurn], earlier: list[Any]
    ) -> tuple[int, dict[str, Any]]:
        """The model's rating, raised to the floor when someone asked to be remembered."""
        request = prompts.rating_request(
            voice, summary, turns, earlier, transcript_tokens=self._budget(TaskType.RATE)
        )
        # Someone asked to be remembered here: the memory is important, however it is rated.
        asked = asked_to_remember(t.text for t in turns if t.role == "person")
        try:
            reply = await calls.complete_json(self._gateway, request, RatingReply)
        except ApplicationError as err:
            if not asked or err.type != "ModelReplyInvalid" or not err.non_retryable:
                raise
            activity.logger.info("rating unreadable; the request to remember rates it: %s", err)
            rubric: dict[str, Any] = {"importance": ASKED_IMPORTANCE, "unrated": str(err)}
            importance = ASKED_IMPORTANCE
        else:
            rubric, importance = reply.model_dump(mode="json"), reply.importance
        if asked and importance < ASKED_IMPORTANCE:
            rubric["rated"], importance = importance, ASKED_IMPORTANCE
        if asked:
            rubric["asked_to_remember"] = asked[:5]
        return importance, rubric

    @activity.defn(name="memory.classify")
    async def classify(self, data: FormationStep) -> ClassificationDone:
        """Tag the memory with my emotional state, its sensitivity and its topics."""
        row, voice, turns, earlier = await self._context(data.formation_id, need_summary=True)
        if row.emotion is not None and row.sensitivity is not None:
            return ClassificationDone(
                formation_id=data.formation_id,
                emotion=Emotion(row.emotion),
                sensitivity=Sensitivity(row.sensitivity),
                tags=list(row.tags or []),
            )
        request = prompts.classification_request(
            voice, row.summary, turns, earlier, transcript_tokens=self._budget(TaskType.CLASSIFY)
        )
        try:
            reply = await calls.complete_json(self._gateway, request, ClassificationReply)
        except ApplicationError as err:
            if err.type != "ModelReplyInvalid" or not err.non_retryable:
                raise
            # Tags are not worth the memory: it is kept neutral and private, untagged.
            activity.logger.info("classification unreadable; kept unclassified: %s", err)
            reply = UNCLASSIFIED
        emotion, distribution = calls.top_emotion(reply.emotions)
        tags = calls.clean_tags(reply.tags)
        sensitivity = reply.sensitivity
        if not calls.call_plan(self._gateway, TaskType.CLASSIFY).judge_sensitivity:
            # A model too small to judge who may hear it: private, as if unclassified.
            sensitivity = Sensitivity.PRIVATE
        await self._update(
            data.formation_id,
            emotion=emotion.value,
            emotions=distribution,
            sensitivity=sensitivity.value,
            tags=tags,
        )
        return ClassificationDone(
            formation_id=data.formation_id, emotion=emotion, sensitivity=sensitivity, tags=tags
        )

    @activity.defn(name="memory.store")
    async def store(self, data: FormationStep) -> StoredMemory:
        """Embed the summary (if the encoder answers) and store the memory record."""
        async with self._db.session() as session:
            row = await ledger.load(session, formation_id=data.formation_id)
        if row is None or row.summary is None or row.importance is None:
            raise ApplicationError(
                f"formation {data.formation_id} is not ready to store",
                type="FormationOutOfOrder",
                non_retryable=True,
            )
        if row.record_id is not None:
            return StoredMemory(formation_id=row.id, record_id=row.record_id, embedded=False)
        vector = await encode_or_none(self._encoder, row.summary, timeout_s=ENCODE_TIMEOUT_S)
        # The ID encodes when the remembered stretch ended, so IDs sort like experiences.
        record_id = ulid_from_parts(row.turn_last_at or _now(), secrets.randbits(80))
        record = NewRecord(
            id=record_id,
            agent=row.agent,
            channel_id=row.channel_id,
            conversation_id=row.conversation_id,
            summary=row.summary,
            importance=row.importance,
            created_at=_now(),
            tags=list(row.tags or []),
            emotion=row.emotion,
            sensitivity=await self._floored(row.channel_id, row.sensitivity),
            participants=list(row.participants or []),
            turn_first=row.turn_first,
            turn_last=row.turn_last,
            turn_first_at=row.turn_first_at,
            turn_last_at=row.turn_last_at,
            derived_from=list(row.derived_from or []),
            rubric=row.rubric,
            emotions=row.emotions,
            embedding=vector,
            embed_model=self._encoder.name if self._encoder is not None else None,
        )
        try:
            await self._insert(record, row.id)
        except DBAPIError:
            if vector is None:
                raise
            # A vector the column cannot hold (the encoder changed size) must not lose the
            # memory: store it bare; `persyn memory reindex` sizes the column and fills it.
            log.warning("memory vector rejected; storing %s without one", record_id, exc_info=True)
            vector = None
            await self._insert(NewRecord(**{**record.__dict__, "embedding": None}), row.id)
        return StoredMemory(formation_id=row.id, record_id=record_id, embedded=vector is not None)

    async def _floored(self, channel_id: str, classified: str | None) -> str:
        """The classified sensitivity, raised to the channel's least (``channel_sensitivity``)."""
        sensitivity = Sensitivity(classified or Sensitivity.PRIVATE.value)
        floors = self._settings.channel_sensitivity
        if not floors:
            return sensitivity.value
        async with self._db.session() as session:
            channel = await session.get(Channel, channel_id)
        if channel is None:
            return sensitivity.value
        floor = channel_floor(
            floors, key=channel.key, service=channel.service, group=channel.memory_group
        )
        return stricter(sensitivity, floor).value

    async def _insert(self, record: NewRecord, formation_id: str) -> None:
        async with self._db.session() as session:
            await insert_record(session, record=record)
            await ledger.update(
                session,
                formation_id=formation_id,
                now=_now(),
                status="done",
                record_id=record.id,
                error=None,
            )

    @activity.defn(name="memory.fail")
    async def fail(self, data: FormationFailure) -> Done:
        """Leave the range for a later consolidation (its dialog stays where it is)."""
        await self._update(data.formation_id, status="failed", error=data.error)
        return Done()

    async def _update(self, formation_id: str, **values: Any) -> None:
        async with self._db.session() as session:
            await ledger.update(session, formation_id=formation_id, now=_now(), **values)
