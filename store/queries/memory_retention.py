"""Retention: culling low-rated old memories and filling missing vectors.

Culling deletes only records rated below the threshold *and* older than the cutoff; everything
rated at or above it stays whatever its age (spec §4.1). Each deleted record leaves an audit
entry without its text; the records derived from it stay where they are. Dropping old dialog
is ``store.queries.erasure``'s job.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from sqlmodel.ext.asyncio.session import AsyncSession

from schemas.memory_formation import CulledMemory, CullResult, MemoryAction
from store.queries.memory import COLUMNS, derived_records, write_audit
from store.sql import execute, vector_literal

CULL_BATCH = 500
"""Records deleted per transaction while culling."""


async def cull(
    session: AsyncSession,
    *,
    agent: str,
    below: int,
    cutoff: datetime,
    dry_run: bool,
    actor: str,
    now: datetime,
    show: int = 50,
) -> CullResult:
    """Delete the agent's records rated below ``below`` and created before ``cutoff``.

    Records rated ``below`` or higher are never touched, whatever their age. Each deleted
    record gets an audit entry; a dry run deletes and audits nothing.
    """
    condition = "m.agent = :agent AND m.importance < :below AND m.created_at < :cutoff"
    params = {"agent": agent, "below": below, "cutoff": cutoff}
    if dry_run:
        total = await execute(
            session, f"SELECT count(*) FROM memory_records m WHERE {condition}", params
        )
        preview = await execute(
            session,
            f"SELECT {COLUMNS} FROM memory_records m WHERE {condition} ORDER BY m.id LIMIT :n",
            {**params, "n": show},
        )
        shown = [_culled(r) for r in preview]
        await session.commit()
        return CullResult(
            agent=agent,
            below=below,
            cutoff=cutoff,
            dry_run=True,
            count=int(total.scalar_one()),
            records=shown,
        )
    shown, count = [], 0
    while True:
        rows = (
            await execute(
                session,
                f"SELECT {COLUMNS}, m.derived_from FROM memory_records m WHERE {condition} "
                "ORDER BY m.id LIMIT :n FOR UPDATE SKIP LOCKED",
                {**params, "n": CULL_BATCH},
            )
        ).all()
        if not rows:
            break
        for row in rows:
            derived = await derived_records(session, record_id=row.id)
            await write_audit(
                session,
                row=row,
                action=MemoryAction.CULL,
                actor=actor,
                reason=f"rated {row.importance} (below {below}) and older than the cutoff",
                derived=[d.id for d in derived],
                now=now,
            )
        await execute(
            session,
            "DELETE FROM memory_records WHERE id = ANY(CAST(:ids AS varchar[]))",
            {"ids": [r.id for r in rows]},
        )
        # The drafts they formed from go with them; the audit entries keep no text.
        await execute(
            session,
            "UPDATE memory_formations SET summary = NULL "
            "WHERE record_id = ANY(CAST(:ids AS varchar[]))",
            {"ids": [r.id for r in rows]},
        )
        await session.commit()
        count += len(rows)
        shown.extend(_culled(r) for r in rows[: max(0, show - len(shown))])
    return CullResult(
        agent=agent, below=below, cutoff=cutoff, dry_run=False, count=count, records=shown
    )


def _culled(row: Any) -> CulledMemory:
    return CulledMemory(
        record_id=row.id, importance=row.importance, created_at=row.created_at, summary=row.summary
    )


async def unembedded(session: AsyncSession, *, agent: str, limit: int) -> list[tuple[str, str]]:
    """(ID, summary) of the agent's remembered records still without a vector, oldest first."""
    rows = await execute(
        session,
        "SELECT id, summary FROM memory_records WHERE agent = :a AND embedding IS NULL "
        "AND forgotten_at IS NULL ORDER BY id LIMIT :n",
        {"a": agent, "n": limit},
    )
    return [(str(r.id), str(r.summary)) for r in rows]


async def write_vectors(
    session: AsyncSession, *, model: str, ids: Sequence[str], vectors: Sequence[Sequence[float]]
) -> int:
    """Store vectors for records still remembered (a record forgotten meanwhile stays bare)."""
    if not ids:
        return 0
    result = await execute(
        session,
        "UPDATE memory_records m SET embedding = CAST(v.vec AS vector), embed_model = :m "
        "FROM unnest(CAST(:ids AS text[]), CAST(:vecs AS text[])) AS v (id, vec) "
        "WHERE m.id = v.id AND m.forgotten_at IS NULL",
        {"m": model, "ids": list(ids), "vecs": [vector_literal(v) for v in vectors]},
    )
    await session.commit()
    return int(result.rowcount or 0)
