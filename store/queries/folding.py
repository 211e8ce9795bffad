"""Folding's reads and its one write: which records are ready, what a fold sees, the fold.

A stream (see :mod:`schemas.folding`) is grouped by channel, sensitivity and the *sorted* set
of participants, so the same people in another order are the same stream.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlmodel.ext.asyncio.session import AsyncSession

from schemas.folding import FoldBatch
from schemas.memory import MemoryRecordPublic
from store.queries.memory import COLUMNS, NewRecord, insert_record, to_public
from store.queries.recall import FENCE_SQL, Fence
from store.sql import execute

_PEOPLE = "(SELECT coalesce(array_agg(p ORDER BY p), '{}') FROM unnest(m.participants) p)"
"""The record's participants as a sorted array: the stream's key part for people."""


async def ready_batches(
    session: AsyncSession, *, agent: str, threshold: int, levels: int, limit: int
) -> list[FoldBatch]:
    """Every full run of ``threshold`` live, unfolded records of a stream and level.

    Lowest level first, then by when each batch starts: a recollection folds beside the ones
    before it, and a level fills before the one above reads it. The records left over in a
    stream wait for more.
    """
    rows = await execute(
        session,
        # A record's ID encodes when what it remembers ended: IDs sort like experiences.
        f"SELECT m.level, m.channel_id, array_agg(m.id ORDER BY m.id) AS ids "
        f"FROM memory_records m WHERE m.agent = :agent AND m.folded_into IS NULL "
        f"AND m.forgotten_at IS NULL AND m.level < :levels "
        f"GROUP BY m.level, m.channel_id, m.sensitivity, {_PEOPLE} "
        f"HAVING count(*) >= :threshold",
        {"agent": agent, "threshold": threshold, "levels": levels},
    )
    batches = [
        FoldBatch(
            agent=agent,
            level=int(row.level),
            channel_id=str(row.channel_id),
            records=[str(i) for i in row.ids[start : start + threshold]],
        )
        for row in rows
        for start in range(0, len(row.ids) - threshold + 1, threshold)
    ]
    batches.sort(key=lambda batch: (batch.level, batch.records[0]))
    return batches[:limit]


@dataclass(frozen=True)
class FoldSource:
    """A record as a fold reads it: its text and when it covers."""

    record: MemoryRecordPublic
    first_at: datetime
    last_at: datetime


def _source(row: Any) -> FoldSource:
    record = to_public(row)
    return FoldSource(
        record=record,
        first_at=row.turn_first_at or record.created_at,
        last_at=row.turn_last_at or record.created_at,
    )


async def batch_sources(session: AsyncSession, batch: FoldBatch) -> list[FoldSource]:
    """The batch's records that are still live and unfolded, oldest first."""
    rows = await execute(
        session,
        f"SELECT {COLUMNS}, m.turn_first_at, m.turn_last_at FROM memory_records m "
        "WHERE m.id = ANY(CAST(:ids AS varchar[])) AND m.agent = :agent "
        "AND m.level = :level AND m.folded_into IS NULL AND m.forgotten_at IS NULL "
        "ORDER BY m.id",
        {"ids": list(batch.records), "agent": batch.agent, "level": batch.level},
    )
    return [_source(row) for row in rows]


async def folded_by(session: AsyncSession, *, recollection_id: str) -> int:
    """How many records are folded into ``recollection_id`` (a retried fold finds its write)."""
    row = await execute(
        session,
        "SELECT count(*) FROM memory_records WHERE folded_into = :id",
        {"id": recollection_id},
    )
    return int(row.scalar_one())


async def previous_recollection(
    session: AsyncSession, *, first: MemoryRecordPublic, level: int, before: datetime
) -> FoldSource | None:
    """The stream's newest recollection of ``level`` that ends no later than ``before``.

    ``first`` is a record of the stream (its channel, sensitivity and people select it).
    """
    row = (
        await execute(
            session,
            f"SELECT {COLUMNS}, m.turn_first_at, m.turn_last_at FROM memory_records m "
            "WHERE m.agent = :agent AND m.channel_id = :channel AND m.level = :level "
            "AND m.sensitivity = :sensitivity AND m.forgotten_at IS NULL "
            f"AND {_PEOPLE} = (SELECT coalesce(array_agg(p ORDER BY p), '{{}}') "
            "FROM unnest(CAST(:people AS varchar[])) p) "
            "AND coalesce(m.turn_last_at, m.created_at) <= :before "
            "ORDER BY coalesce(m.turn_last_at, m.created_at) DESC, m.id DESC LIMIT 1",
            {
                "agent": first.agent,
                "channel": first.channel_id,
                "level": level,
                "sensitivity": first.sensitivity.value,
                "people": list(first.participants),
                "before": before,
            },
        )
    ).first()
    return None if row is None else _source(row)


async def store_fold(
    session: AsyncSession, *, recollection: NewRecord, records: Sequence[str]
) -> bool:
    """Store ``recollection`` and link ``records`` up to it (without committing).

    ``False`` (and nothing to commit) when a record was meanwhile folded elsewhere or
    withdrawn: the caller rolls back and the batch is planned again.
    """
    if not await insert_record(session, record=recollection):
        return False
    linked = await execute(
        session,
        "UPDATE memory_records SET folded_into = :id WHERE id = ANY(CAST(:ids AS varchar[])) "
        "AND folded_into IS NULL AND forgotten_at IS NULL",
        {"id": recollection.id, "ids": list(records)},
    )
    return int(linked.rowcount) == len(records)


async def beneath(
    session: AsyncSession,
    *,
    record_id: str,
    to_level: int,
    fence: Fence | None = None,
    limit: int = 200,
) -> list[MemoryRecordPublic]:
    """The live records folded under ``record_id`` down to ``to_level``, oldest first.

    A record above ``to_level`` with nothing live folded into it stands for its stretch
    itself (its records were forgotten). With ``fence``, only records that pass it.
    """
    rows = await execute(
        session,
        "WITH RECURSIVE down(id, level, depth) AS ("
        "  SELECT m.id, m.level, 0 FROM memory_records m WHERE m.id = :id"
        "  UNION ALL"
        "  SELECT c.id, c.level, down.depth + 1 FROM down"
        "  JOIN memory_records c ON c.folded_into = down.id"
        "  WHERE c.forgotten_at IS NULL AND down.level > :to_level AND down.depth < 8"
        f") SELECT {COLUMNS} FROM down JOIN memory_records m ON m.id = down.id "
        "WHERE down.depth > 0 AND (m.level <= :to_level OR NOT EXISTS ("
        "  SELECT 1 FROM memory_records c WHERE c.folded_into = m.id AND c.forgotten_at IS NULL))"
        f" AND {FENCE_SQL if fence is not None else 'TRUE'} ORDER BY m.id LIMIT :limit",
        {
            **(fence.params() if fence is not None else {}),
            "id": record_id,
            "to_level": to_level,
            "limit": limit,
        },
    )
    return [to_public(row) for row in rows]
