"""Run records under soak: bounded by their purge window, shown by purging "a month later".

Every message leaves per-message run records (its prompt, draft, outcome, speak decision,
outbox row, usage rows, guardrail firings). Within a soak of an hour they grow about one row
per message, as they should: the maintenance purge takes them only past
``memory.run_record_retention_days`` (30 days; prompts and drafts never before a day, usage in
whole UTC days). Counting their growth would flag a bound that is working.

So the soak judges them the way a month would: at the very end it runs the purge's own
queries (:func:`store.queries.run_retention.prune_run_records`, with the cutoffs
:func:`activities.memory.retention.run_cutoffs` computes from the stack's settings) at an
instant past every window, and counts what survives of the rows written before it began.
Only what the purge keeps on purpose may remain: outbox messages still pending or waiting for
someone to pick them up. Anything else is a table the purge does not bound.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

from activities.memory.retention import run_cutoffs
from schemas.delivery import DeliveryStatus
from schemas.settings import Settings
from store.db import Database
from store.queries.emotion import prune_readings
from store.queries.run_retention import prune_run_records
from store.sql import execute

RUN_RECORD_TIMES = {
    "activations": "completed_at",
    "drafts": "created_at",
    "emotion_readings": "at",
    "guardrail_firings": "fired_at",
    "outbox": "created_at",
    "prompt_extensions": "created_at",
    "prompts": "created_at",
    "speak_decisions": "decided_at",
    "telegram_inbound": "received_at",
    "telegram_sent": "sent_at",
    "usage_records": "occurred_at",
}
"""Per-message tables bounded by a window of days, with their time: the maintenance purge's
run records, and emotion readings (dropped past ``emotion.keep_days`` as new ones arrive)."""

RUN_RECORD_TABLES = frozenset(RUN_RECORD_TIMES)

KEPT_ON_PURPOSE = (DeliveryStatus.PENDING, DeliveryStatus.AWAITING_PICKUP)
"""Outbox states the purge leaves: a message nobody has received yet."""

PAST_EVERY_WINDOW = timedelta(days=2)
"""How far past the longest window "a month later" is: the day floor and a whole UTC day."""


@dataclass(frozen=True)
class MonthLater:
    """What the purge left of the run records when every window had passed."""

    before: dict[str, int]
    """Rows per run-record table at the end of the soak."""
    survivors: dict[str, int] = field(default_factory=dict)
    """Rows left per table, beyond those kept on purpose."""
    kept_for_pickup: int = 0
    """Outbox messages still pending or waiting for pickup (kept on purpose)."""

    def violations(self) -> list[str]:
        """One line per table the purge does not bound."""
        return [
            f"table {table} keeps {n} rows past its retention window"
            for table, n in sorted(self.survivors.items())
        ]


_WRITTEN_BEFORE = "age(xmin) > txid_current() - :x"
"""The row's writing transaction came before transaction ``:x``: both sides count back from the
current transaction (``age`` in 32-bit IDs, ``txid_current`` with its epoch), so they compare."""


async def _counts(db: Database, *, before: datetime, xid: int) -> tuple[dict[str, int], int]:
    """Rows per run-record table written before ``before`` (or never stamped), and the outbox
    messages kept on purpose among them.

    The stack keeps running (heartbeats fire, consolidation writes): rows written after the
    purge began are not its to judge. Their time alone does not say so: an exchange in flight
    stamps its rows with the workflow's time and commits them later, after its agent's purge.
    So a row counts only if the transaction that wrote it came before transaction ``xid``.
    """
    counts: dict[str, int] = {}
    async with db.session() as session:
        present = {
            r.tablename
            for r in await execute(
                session, "SELECT tablename FROM pg_tables WHERE schemaname = 'public'", {}
            )
        }
        for table in sorted(RUN_RECORD_TABLES & present):
            at = RUN_RECORD_TIMES[table]
            rows = await execute(
                session,
                f'SELECT count(*) AS n FROM "{table}" WHERE ({at} < :t OR {at} IS NULL) '
                f"AND {_WRITTEN_BEFORE}",
                {"t": before, "x": xid},
            )
            counts[table] = int(rows.one().n)
        kept = await execute(
            session,
            "SELECT count(*) AS n FROM outbox WHERE created_at < :t "
            f"AND status = ANY(CAST(:s AS varchar[])) AND {_WRITTEN_BEFORE}",
            {"t": before, "s": [str(s) for s in KEPT_ON_PURPOSE], "x": xid},
        )
        return counts, int(kept.one().n)


async def month_later(db: Database, handles: Sequence[str], settings: Settings) -> MonthLater:
    """Purge every agent's run records as if every retention window had passed; count the rest.

    Destructive: run it last, after every other end-of-run check has read the tables.
    """
    began = datetime.now(UTC)
    async with db.session() as session:
        xid = int((await execute(session, "SELECT txid_current() AS x", {})).one().x)
    before, _ = await _counts(db, before=began, xid=xid)
    memory = settings.memory
    longest = max(
        memory.run_record_retention_days,
        memory.guardrail_retention_days,
        settings.emotion.keep_days,
    )
    later = began + timedelta(days=longest) + PAST_EVERY_WINDOW
    cutoffs = run_cutoffs(memory, later)
    for handle in handles:
        while True:  # one call stops after its time budget; the next goes on
            async with db.session() as session:
                done = await prune_run_records(session, agent=handle, cutoffs=cutoffs)
            if not done.out_of_time:
                break
        async with db.session() as session:
            faded = later - timedelta(days=settings.emotion.keep_days)
            await prune_readings(session, agent=handle, before=faded)
    after, kept = await _counts(db, before=began, xid=xid)
    survivors = dict(after)
    if "outbox" in survivors:
        survivors["outbox"] -= kept
    return MonthLater(
        before=before,
        survivors={table: n for table, n in survivors.items() if n > 0},
        kept_for_pickup=kept,
    )
