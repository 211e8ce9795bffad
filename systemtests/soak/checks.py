"""The soak's invariants, each a small check over PostgreSQL or Temporal's visibility API.

Every check returns violations as one-line strings (empty: it holds). Samples for the flatness
invariants (worker RSS, history lengths, table row counts) are gathered while the soak runs
and judged at the end.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from statistics import median
from typing import Any

from temporalio.client import Client
from temporalio.service import RPCError

from contract import names
from schemas.runs import HISTORY_LIMIT as RUN_HISTORY_LIMIT
from store.db import Database
from store.sql import execute
from systemtests.soak.load import Sent

STUCK_TASK_S = 120.0
"""A workflow task scheduled this long ago and still pending: the workflow is stuck."""

STUCK_ACTIVITY_S = 300.0
"""An activity not attempted for this long (model timeout plus retries fit well within)."""

SHORT_LIVED_S = 900.0
"""Activations, consolidations and deliberations finish well within this."""

HISTORY_LIMIT = 2 * RUN_HISTORY_LIMIT
"""An agent continues as new at ``schemas.runs.HISTORY_LIMIT`` events once its queue is empty:
twice that means it did not (Temporal itself warns only at 10,240)."""

RSS_TREND_LIMIT = 1.25
"""Worker lifetimes late in the run may end at most this much higher than early ones (medians
of the first and last third). Each kill starts a fresh process, so growth that survives
restarts is growth with the data: a cache or a query that loads more as the store grows."""

RSS_CEILING = 2.0
"""No worker may reach this multiple of the median worker's RSS after warm-up (the median, not
the first: a first worker's encoder and model clients may still be loading then). Within one
lifetime a runaway shows here (a lifetime between kills is minutes long, too short to tell a
slow leak from one encoder batch's peak; ``bench/RESULTS.md`` has a long single-worker run)."""

DIALOG_AND_MEMORY_TABLES = frozenset(
    {
        "conversations",
        "dialog_turns",
        "dialog_search_terms",
        "dialog_search_stats",
        "memory_records",
        "memory_formations",
        "memory_audit",
    }
)
"""Tables allowed to grow with the conversation: the verbatim record and the memories."""

EXPIRING_TABLES = frozenset({"completion_markers", "alembic_version"})
"""Bounded by design: completion markers expire after an hour and maintenance purges them."""


async def _rows(db: Database, sql: str, **params: Any) -> list[Any]:
    async with db.session() as session:
        return list((await execute(session, sql, params)).all())


# -- no input lost, no reply twice ------------------------------------------------------------


async def delivery_violations(db: Database, sent: Sequence[Sent]) -> list[str]:
    """Every submitted event is in the dialog, answered once; no event transmitted twice."""
    ids = [s.event.event_id for s in sent]
    if not ids:
        return []
    found = {
        r.id for r in await _rows(db, "SELECT id FROM dialog_turns WHERE id = ANY(:ids)", ids=ids)
    }
    violations = [
        f"input lost: event {s.event.event_id} of {s.agent} is not in the dialog"
        for s in sent
        if s.event.event_id not in found
    ]
    violations += [
        f"no receipt: event {s.event.event_id} of {s.agent} was never answered"
        for s in sent
        if s.done is None
    ]
    twice = await _rows(
        db,
        "SELECT a.event_id, count(o.id) AS n FROM activations a JOIN outbox o "
        "ON o.activation_id = a.id WHERE a.event_id = ANY(:ids) "
        "GROUP BY a.event_id HAVING count(o.id) > 1",
        ids=ids,
    )
    violations += [f"reply sent {r.n} times for event {r.event_id}" for r in twice]
    replies = [s.reply for s in sent if s.outcome == "spoke" and s.reply]
    if replies:
        repeated = await _rows(
            db,
            "SELECT text, count(*) AS n, string_agg(id || '@' || conversation_id || '#' || seq, "
            "' ' ORDER BY seq) AS turns FROM dialog_turns WHERE role = 'agent' "
            "AND text = ANY(:texts) GROUP BY text HAVING count(*) > 1",
            texts=replies,
        )
        # Which turns (ID@conversation#seq) say it: the evidence to chase a duplicate with.
        violations += [
            f"reply recorded {r.n} times: {r.text[:60]!r} (turns {r.turns})"
            + retried_task_note(r.turns)
            for r in repeated
        ]
        # By text too: an activation that died after transmitting has no activations row.
        queued = await _rows(
            db,
            "SELECT text, count(*) AS n, string_agg(activation_id, ' ') AS activations "
            "FROM outbox WHERE text = ANY(:texts) GROUP BY text HAVING count(*) > 1",
            texts=replies,
        )
        violations += [
            f"reply queued {r.n} times: {r.text[:60]!r} (activations {r.activations})"
            for r in queued
        ]
    return violations


def retried_task_note(turns: str) -> str:
    """A note when the turns are one transmit run again by a retried workflow task.

    Such turns share their ULID's random part (the run's seeded randomness) and differ only in
    its time (``workflow.now()`` of each attempt): activations recorded before the
    ``reply-turn-id-from-run-start`` patch named their reply that way.
    """
    ids = [turn.split("@", 1)[0] for turn in turns.split()]
    if len(ids) > 1 and len({turn_id[10:] for turn_id in ids}) == 1:
        return "; one transmit run again by a retried workflow task"
    return ""


async def activations_per_event(db: Database, sent: Sequence[Sent]) -> int:
    """Events that started more than one activation (a redo; a figure, not a violation)."""
    ids = [s.event.event_id for s in sent]
    rows = await _rows(
        db,
        "SELECT event_id FROM activations WHERE event_id = ANY(:ids) "
        "GROUP BY event_id HAVING count(*) > 1",
        ids=ids,
    )
    return len(rows)


# -- no workflow stuck --------------------------------------------------------------------------


def _age(now: datetime, stamp: Any) -> float | None:
    if stamp is None or not stamp.seconds:
        return None
    at: datetime = stamp.ToDatetime(tzinfo=UTC)
    return (now - at).total_seconds()


async def stuck_workflows(client: Client, *, now: datetime | None = None) -> list[str]:
    """Open workflows that have not progressed within their timeout.

    A long-lived workflow waiting for a message is idle, not stuck. Stuck is a workflow task
    pending for minutes, an activity nobody attempted for longer than its retries allow, or a
    one-input workflow (activation, consolidation, deliberation) still open long after it
    should have finished.
    """
    now = now or datetime.now(UTC)
    violations: list[str] = []
    async for execution in client.list_workflows('ExecutionStatus="Running"'):
        workflow_id = execution.id
        if execution.start_time is not None and not workflow_id.startswith(
            ("agent/", "conversation/")
        ):
            running = (now - execution.start_time).total_seconds()
            if running > SHORT_LIVED_S:
                violations.append(f"stuck: {workflow_id} open for {running:.0f} s")
                continue
        try:
            described = await client.get_workflow_handle(
                workflow_id, run_id=execution.run_id
            ).describe()
        except RPCError:
            continue  # closed between the list and the describe
        raw = described.raw_description
        if raw.HasField("pending_workflow_task"):
            age = _age(now, raw.pending_workflow_task.scheduled_time)
            if age is not None and age > STUCK_TASK_S:
                violations.append(f"stuck: {workflow_id} has a workflow task pending {age:.0f} s")
        for activity in raw.pending_activities:
            stamps = [
                _age(now, activity.scheduled_time),
                _age(now, activity.last_started_time),
                _age(now, activity.last_attempt_complete_time),
            ]
            ages = [a for a in stamps if a is not None]
            if ages and min(ages) > STUCK_ACTIVITY_S:
                violations.append(
                    f"stuck: {workflow_id} activity {activity.activity_type.name} idle "
                    f"{min(ages):.0f} s (attempt {activity.attempt})"
                )
    return violations


async def history_lengths(client: Client, handles: Sequence[str]) -> dict[str, int]:
    """Events in the current run of each ``agent/{handle}``."""
    lengths: dict[str, int] = {}
    for handle in handles:
        try:
            described = await client.get_workflow_handle(names.agent_workflow_id(handle)).describe()
        except RPCError:
            continue
        lengths[handle] = described.raw_description.workflow_execution_info.history_length
    return lengths


# -- heartbeat, memories, tables ----------------------------------------------------------------


async def heartbeat_violations(db: Database, client: Client, handle: str) -> list[str]:
    """A deleted heartbeat stays deleted: its record says so and no schedule exists."""
    violations: list[str] = []
    rows = await _rows(db, "SELECT state FROM heartbeats WHERE agent = :a", a=handle)
    if not rows or rows[0].state != "deleted":
        state = rows[0].state if rows else "no record"
        violations.append(f"heartbeat of {handle} resurrected: its record says {state}")
    try:
        await client.get_schedule_handle(names.heartbeat_schedule_id(handle)).describe()
    except RPCError:
        pass  # not found: as it should be
    else:
        violations.append(f"heartbeat of {handle} resurrected: its schedule exists again")
    return violations


@dataclass
class MemoryState:
    """What the memory store holds, agent by agent, at one moment."""

    live: int
    person_turns: int
    important_ids: set[str]
    overdue_low: int
    """Low-rated records older than the cull cutoff plus a maintenance period: culling lags."""


async def memory_state(
    db: Database, handles: Sequence[str], *, below: int, overdue_after: timedelta
) -> MemoryState:
    """Counts over the agents under soak (``below``: the cull threshold)."""
    cutoff = datetime.now(UTC) - overdue_after
    live = await _rows(
        db,
        "SELECT id, importance, created_at FROM memory_records WHERE agent = ANY(:h)",
        h=list(handles),
    )
    turns = await _rows(
        db,
        "SELECT count(*) AS n FROM dialog_turns WHERE agent = ANY(:h) AND role = 'person'",
        h=list(handles),
    )
    return MemoryState(
        live=len(live),
        person_turns=int(turns[0].n),
        important_ids={r.id for r in live if r.importance >= below},
        overdue_low=sum(1 for r in live if r.importance < below and r.created_at < cutoff),
    )


async def table_counts(db: Database) -> dict[str, int]:
    """Row counts of every table in the public schema."""
    tables = await _rows(
        db, "SELECT tablename FROM pg_tables WHERE schemaname = 'public' ORDER BY tablename"
    )
    counts: dict[str, int] = {}
    for table in tables:
        name = table.tablename
        rows = await _rows(db, f'SELECT count(*) AS n FROM "{name}"')
        counts[name] = int(rows[0].n)
    return counts


@dataclass
class Samples:
    """What the soak sampled over time, judged at the end."""

    rss: dict[int, list[int]] = field(default_factory=dict)
    """Worker RSS (KiB) per worker PID, in sampling order."""
    history: dict[str, list[int]] = field(default_factory=dict)
    tables: list[tuple[int, dict[str, int]]] = field(default_factory=list)
    """(messages answered so far, row counts) per sample."""
    cpu: list[tuple[float, float]] = field(default_factory=list)
    """(seconds into the run, the machine's CPU busy % since the previous sample)."""

    def growing_tables(
        self, *, per_message: float = 0.5, min_messages: int = 50
    ) -> dict[str, float]:
        """Tables outside dialog and memory whose rows grow with the messages: rows per message.

        Judged from the first sample after warm-up (the second) to the last, when at least
        ``min_messages`` were answered between them.
        """
        if len(self.tables) < 3:
            return {}
        (m0, first), (m1, last) = self.tables[1], self.tables[-1]
        if m1 - m0 < min_messages:
            return {}
        growth = {
            name: (last.get(name, 0) - first.get(name, 0)) / (m1 - m0)
            for name in last
            if name not in DIALOG_AND_MEMORY_TABLES | EXPIRING_TABLES
        }
        return {name: rate for name, rate in growth.items() if rate >= per_message}

    def rss_growth(self) -> dict[int, tuple[int, int]]:
        """Per worker lifetime with enough samples: (RSS after warm-up, RSS at its end) in KiB."""
        return {
            pid: (samples[len(samples) // 4], samples[-1])
            for pid, samples in self.rss.items()
            if len(samples) >= 8
        }

    def rss_violations(self) -> list[str]:
        """Worker RSS flat: under ``RSS_CEILING``, and not trending up across restarts."""
        lifetimes = list(self.rss_growth().values())  # in the order the workers started
        if not lifetimes:
            return []
        violations = []
        base = median(level for level, _ in lifetimes)
        peak = max(max(samples) for samples in self.rss.values() if samples)
        if peak > base * RSS_CEILING:
            violations.append(
                f"worker RSS reached {peak / 1024:.0f} MiB, over {RSS_CEILING:g}x the median "
                f"worker's {base / 1024:.0f} MiB after warm-up"
            )
        third = len(lifetimes) // 3
        if third:
            early = median(end for _, end in lifetimes[:third])
            late = median(end for _, end in lifetimes[-third:])
            if late > early * RSS_TREND_LIMIT:
                violations.append(
                    f"worker RSS grows across restarts: early lifetimes ended at "
                    f"{early / 1024:.0f} MiB, late ones at {late / 1024:.0f} MiB"
                )
        return violations

    def longest_history(self) -> int:
        """The most events any agent's current run held at a sample."""
        return max((max(v) for v in self.history.values() if v), default=0)
