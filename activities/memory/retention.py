"""Retention activities: culling, the raw-dialog window, run records, markers, vectors.

Run by each agent's maintenance schedule (``MaintenanceWorkflow``) and, for vectors, after
every consolidation. Thresholds come from ``MemorySettings`` when the activity runs, so a
changed setting applies at the next firing without touching the schedule.

Dropping dialog past its window takes every copy with it (``store.queries.erasure``): the
prompts built from it, the outbox, markers, activation texts, tool-call content, parked
deliberation, the content of the agent's spans in the span file, and the turns still held in
open conversations' windows (a ``forget_turns`` signal). The per-message run records
(prompts, drafts, outcomes, decisions, settled outbox, guardrail firings, usage rows rolled up
into daily sums) go past their own window, ``run_record_retention_days``, in the same purge.
"""

from __future__ import annotations

import asyncio
import logging
from datetime import UTC, datetime, timedelta
from pathlib import Path

from temporalio import activity
from temporalio.client import Client
from temporalio.service import RPCError, RPCStatusCode

from activities.memory.encoder import Encoder
from activities.memory.search import index_turns
from contract import names
from observability.span_redaction import agent_traces, redact_span_file, strip_content
from schemas.erasure import ForgetTurns
from schemas.memory import MemorySettings
from schemas.memory_formation import (
    CullInput,
    CullResult,
    IndexDialogInput,
    IndexDialogResult,
    PendingFormations,
    PendingFormationsQuery,
    PurgeInput,
    PurgeResult,
)
from store.db import Database
from store.queries import memory_retention
from store.queries.erasure import erase_dialog, open_conversations
from store.queries.memory_formation import failed_count
from store.queries.run_retention import RunCutoffs, prune_run_records
from store.queries.runtime import purge_expired_markers

log = logging.getLogger(__name__)

VECTOR_BATCH = 64
"""Memory summaries encoded per call while filling missing vectors."""


TURN_SCRATCH_FLOOR = timedelta(days=1)
"""Prompts and drafts stay at least this long: a deferred deliberation may still read them."""


def run_cutoffs(settings: MemorySettings, now: datetime) -> RunCutoffs:
    """Per-message rows older than these go (``store.queries.run_retention``)."""
    window = timedelta(days=settings.run_record_retention_days)
    usage = now.astimezone(UTC) - window
    return RunCutoffs(
        records=now - window,
        turn_scratch=now - max(window, TURN_SCRATCH_FLOOR),
        # Whole days only, so each day's usage is either all in the ledger or all summed.
        usage=usage.replace(hour=0, minute=0, second=0, microsecond=0),
        guardrails=now - timedelta(days=settings.guardrail_retention_days),
    )


def cull_thresholds(settings: MemorySettings, now: datetime) -> tuple[int, datetime]:
    """Records rated below the first value and created before the second are culled."""
    return settings.cull_below, now - timedelta(days=settings.cull_after_days)


async def run_cull(db: Database, settings: MemorySettings, data: CullInput) -> CullResult:
    """Cull (or, dry, list) the agent's records rated below the threshold and old enough."""
    below, cutoff = cull_thresholds(settings, data.now)
    async with db.session() as session:
        return await memory_retention.cull(
            session,
            agent=data.agent,
            below=below,
            cutoff=cutoff,
            dry_run=data.dry_run,
            actor=data.actor,
            now=data.now,
            show=data.show,
        )


class RetentionActivities:
    """Keeps an agent's memory store bounded and its vectors filled in.

    ``client`` reaches open conversations so retention also drops their in-memory turns;
    ``span_file`` is the file exporter's span file, redacted with the dialog it recorded.
    """

    def __init__(
        self,
        db: Database,
        encoder: Encoder | None,
        settings: MemorySettings,
        *,
        client: Client | None = None,
        span_file: Path | None = None,
    ) -> None:
        self._db = db
        self._encoder = encoder
        self._settings = settings
        self._client = client
        self._span_file = span_file

    @activity.defn(name="memory.cull")
    async def cull(self, data: CullInput) -> CullResult:
        """Delete low-rated old memories, one audit entry each; high-rated ones stay."""
        return await run_cull(self._db, self._settings, data)

    @activity.defn(name="memory.purge")
    async def purge(self, data: PurgeInput) -> PurgeResult:
        """Drop dialog past its window (if set) with every copy, old run records, markers."""
        result = PurgeResult()
        days = self._settings.dialog_retention_days
        if days is not None:
            result.dialog_turns = await self.erase_dialog(
                data.agent, before=data.now - timedelta(days=days)
            )
        async with self._db.session() as session:
            result.markers += await purge_expired_markers(session, now=data.now)
        async with self._db.session() as session:
            pruned = await prune_run_records(
                session, agent=data.agent, cutoffs=run_cutoffs(self._settings, data.now)
            )
        result.run_records = pruned.rows
        return result

    async def erase_dialog(self, agent: str, *, before: datetime) -> int:
        """Remove ``agent``'s dialog said before ``before`` from everywhere; returns its turns."""
        async with self._db.session() as session:
            erased = await erase_dialog(session, agent=agent, before=before)
            conversations = await open_conversations(session, agent=agent)
        log.info("retention for %s before %s: %s", agent, before.isoformat(), erased)
        await self._forget_in_windows(conversations, before)
        if self._span_file is not None:
            path = self._span_file
            traces = await asyncio.to_thread(agent_traces, path, agent)
            if traces:
                await asyncio.to_thread(redact_span_file, path, strip_content(traces, before))
        return erased.dialog_turns

    async def _forget_in_windows(self, conversations: list[str], before: datetime) -> None:
        if self._client is None:
            return
        for conversation_id in conversations:
            handle = self._client.get_workflow_handle(
                names.conversation_workflow_id(conversation_id)
            )
            try:
                await handle.signal(names.FORGET_TURNS, ForgetTurns(before=before))
            except RPCError as err:
                # A conversation that closed meanwhile holds no window any more.
                if err.status is not RPCStatusCode.NOT_FOUND:
                    raise

    @activity.defn(name="memory.pending_formations")
    async def pending_formations(self, data: PendingFormationsQuery) -> PendingFormations:
        """How many failed ranges wait for another consolidation."""
        async with self._db.session() as session:
            return PendingFormations(failed=await failed_count(session, agent=data.agent))

    @activity.defn(name="memory.index")
    async def index(self, data: IndexDialogInput) -> IndexDialogResult:
        """Fill missing vectors of dialog turns and memories; the encoder never fails it."""
        if self._encoder is None:
            return IndexDialogResult(error="no encoder is configured")
        result = IndexDialogResult()
        errors: list[str] = []
        try:
            result.turns = await index_turns(self._db, self._encoder, data.agent, data.limit)
        except Exception as err:  # fail soft: search and recall work without vectors
            errors.append(f"dialog turns: {err}")
        try:
            result.memories = await self._fill_memories(data.agent, data.limit)
        except Exception as err:
            errors.append(f"memories: {err}")
        result.error = "; ".join(errors)[:1000] or None
        return result

    async def _fill_memories(self, agent: str, limit: int) -> int:
        assert self._encoder is not None
        done = 0
        while done < limit:
            async with self._db.session() as session:
                pending = await memory_retention.unembedded(
                    session, agent=agent, limit=min(VECTOR_BATCH, limit - done)
                )
            if not pending:
                break
            vectors = await self._encoder.encode([summary for _, summary in pending])
            async with self._db.session() as session:
                await memory_retention.write_vectors(
                    session,
                    model=self._encoder.name,
                    ids=[record_id for record_id, _ in pending],
                    vectors=vectors,
                )
            done += len(pending)
        return done
