"""Memory records: store a new one, list and show them, withdraw them (forget, cull).

Withdrawal never cascades down: forgetting or culling a record leaves the records derived from
it (those whose ``derived_from`` holds its ID) in place, and says which they are. It does
climb: a recollection folded from a forgotten record retells it, so it is forgotten too, and
the other records folded into it are freed to fold again (:func:`dissolve_above`). Every withdrawal
writes an audit entry with who, when and why and a snapshot of the record's metadata; the
text itself is erased (``store.queries.erasure``).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from sqlmodel.ext.asyncio.session import AsyncSession

from schemas.ids import new_ulid
from schemas.memory import MemoryRecordPublic, Sensitivity
from schemas.memory_formation import (
    ForgetResult,
    MemoryAction,
    MemoryAuditEntry,
    MemoryDetail,
)
from store.queries.erasure import erase_memory_text
from store.sql import execute, vector_literal

COLUMNS = (
    "m.id, m.agent, m.channel_id, m.conversation_id, m.summary, m.importance, m.tags, "
    "m.emotion, m.sensitivity, m.participants, m.turn_first, m.turn_last, m.created_at, "
    "m.forgotten_at, m.level, m.folded_into"
)


def to_public(row: Any) -> MemoryRecordPublic:
    """A row selected with :data:`COLUMNS` as the wire sees it."""
    return MemoryRecordPublic(
        id=row.id,
        agent=row.agent,
        channel_id=row.channel_id,
        conversation_id=row.conversation_id,
        summary=row.summary,
        importance=row.importance,
        tags=list(row.tags or []),
        emotion=row.emotion,
        # An unknown designation (a future value, a manual edit) is treated as the strictest.
        sensitivity=(
            Sensitivity(row.sensitivity)
            if row.sensitivity in set(Sensitivity)
            else Sensitivity.RESTRICTED
        ),
        participants=list(row.participants or []),
        turn_first=row.turn_first,
        turn_last=row.turn_last,
        created_at=row.created_at,
        forgotten_at=row.forgotten_at,
        level=row.level,
        folded_into=row.folded_into,
    )


@dataclass(frozen=True)
class NewRecord:
    """A memory record about to be stored."""

    id: str
    agent: str
    channel_id: str
    conversation_id: str | None
    summary: str
    importance: int
    created_at: datetime
    tags: list[str] = field(default_factory=list)
    emotion: str | None = None
    sensitivity: str = Sensitivity.PRIVATE.value
    participants: list[str] = field(default_factory=list)
    turn_first: str | None = None
    turn_last: str | None = None
    turn_first_at: datetime | None = None
    turn_last_at: datetime | None = None
    derived_from: list[str] = field(default_factory=list)
    rubric: dict[str, Any] | None = None
    emotions: dict[str, float] | None = None
    embedding: Sequence[float] | None = None
    embed_model: str | None = None
    level: int = 1


async def insert_record(session: AsyncSession, *, record: NewRecord) -> bool:
    """Store a record (without committing); ``False`` if its ID was already stored."""
    result = await execute(
        session,
        "INSERT INTO memory_records (id, agent, channel_id, conversation_id, summary, embedding, "
        "embed_model, importance, tags, emotion, sensitivity, participants, turn_first, "
        "turn_last, created_at, derived_from, turn_first_at, turn_last_at, rubric, emotions, "
        "level) "
        "VALUES (:id, :agent, :channel, :conversation, :summary, CAST(:vec AS vector), :model, "
        ":importance, CAST(:tags AS varchar[]), :emotion, :sensitivity, "
        "CAST(:people AS varchar[]), :first, :last, :created, CAST(:derived AS varchar[]), "
        ":first_at, :last_at, CAST(:rubric AS jsonb), CAST(:emotions AS jsonb), :level) "
        "ON CONFLICT (id) DO NOTHING",
        {
            "id": record.id,
            "agent": record.agent,
            "channel": record.channel_id,
            "conversation": record.conversation_id,
            "summary": record.summary,
            "vec": vector_literal(record.embedding) if record.embedding is not None else None,
            "model": record.embed_model if record.embedding is not None else None,
            "importance": record.importance,
            "tags": record.tags,
            "emotion": record.emotion,
            "sensitivity": record.sensitivity,
            "people": record.participants,
            "first": record.turn_first,
            "last": record.turn_last,
            "created": record.created_at,
            "derived": record.derived_from,
            "first_at": record.turn_first_at,
            "last_at": record.turn_last_at,
            "rubric": json.dumps(record.rubric) if record.rubric is not None else None,
            "emotions": json.dumps(record.emotions) if record.emotions is not None else None,
            "level": record.level,
        },
    )
    return bool(result.rowcount)


async def list_records(
    session: AsyncSession,
    *,
    agent: str,
    channel_key: str | None = None,
    limit: int = 50,
    include_forgotten: bool = False,
) -> list[tuple[MemoryRecordPublic, str]]:
    """The agent's records, newest first, each with its channel's key."""
    result = await execute(
        session,
        f"SELECT {COLUMNS}, c.key AS channel_key FROM memory_records m "
        "JOIN channels c ON c.id = m.channel_id WHERE m.agent = :agent "
        "AND (CAST(:key AS varchar) IS NULL OR c.key = :key) "
        "AND (:all OR m.forgotten_at IS NULL) ORDER BY m.id DESC LIMIT :n",
        {"agent": agent, "key": channel_key, "all": include_forgotten, "n": limit},
    )
    return [(to_public(r), str(r.channel_key)) for r in result]


async def with_person(
    session: AsyncSession,
    *,
    agent: str,
    channel_key: str,
    person_id: str,
    limit: int,
    tops: bool = False,
) -> list[MemoryRecordPublic]:
    """The agent's unforgotten memories of ``person_id`` on one channel, newest first.

    ``restricted`` records are never among them (they are the operator's alone). With
    ``tops``, only records folded into nothing: each stretch at the highest level it reached.
    """
    result = await execute(
        session,
        f"SELECT {COLUMNS} FROM memory_records m JOIN channels c ON c.id = m.channel_id "
        "WHERE m.agent = :agent AND c.key = :key AND :person = ANY(m.participants) "
        "AND m.forgotten_at IS NULL AND m.sensitivity <> 'restricted' "
        "AND (NOT :tops OR m.folded_into IS NULL) ORDER BY m.id DESC LIMIT :n",
        {"agent": agent, "key": channel_key, "person": person_id, "n": limit, "tops": tops},
    )
    return [to_public(r) for r in result]


async def derived_records(session: AsyncSession, *, record_id: str) -> list[MemoryRecordPublic]:
    """Records whose consolidation prompt held ``record_id`` (they derive from it)."""
    result = await execute(
        session,
        f"SELECT {COLUMNS} FROM memory_records m "
        "WHERE m.derived_from @> ARRAY[CAST(:id AS varchar)] ORDER BY m.id",
        {"id": record_id},
    )
    return [to_public(r) for r in result]


def _audit(row: Any) -> MemoryAuditEntry:
    return MemoryAuditEntry(
        id=row.id,
        agent=row.agent,
        record_id=row.record_id,
        action=MemoryAction(row.action),
        actor=row.actor,
        reason=row.reason,
        summary=row.summary,
        derived=list(row.derived or []),
        at=row.at,
    )


async def audit_entries(session: AsyncSession, *, record_id: str) -> list[MemoryAuditEntry]:
    """Every withdrawal recorded for ``record_id``, oldest first."""
    result = await execute(
        session,
        "SELECT * FROM memory_audit WHERE record_id = :id ORDER BY at, id",
        {"id": record_id},
    )
    return [_audit(r) for r in result]


async def detail(session: AsyncSession, *, record_id: str) -> MemoryDetail | None:
    """One record with where it came from, what derives from it and its audit trail.

    A culled record is gone, but its audit entries remain: it is shown from the last one.
    """
    result = await execute(
        session,
        f"SELECT {COLUMNS}, m.derived_from, m.embedding IS NOT NULL AS embedded, "
        "c.key AS channel_key FROM memory_records m LEFT JOIN channels c ON c.id = m.channel_id "
        "WHERE m.id = :id",
        {"id": record_id},
    )
    row = result.first()
    if row is None:
        return await _withdrawn(session, record_id=record_id)
    return MemoryDetail(
        record=to_public(row),
        channel_key=row.channel_key,
        embedded=bool(row.embedded),
        derived_from=list(row.derived_from or []),
        derived=await derived_records(session, record_id=record_id),
        audit=await audit_entries(session, record_id=record_id),
    )


async def _withdrawn(session: AsyncSession, *, record_id: str) -> MemoryDetail | None:
    """A deleted record as its last audit entry's snapshot remembers it."""
    entries = await audit_entries(session, record_id=record_id)
    if not entries:
        return None
    last = (
        await execute(
            session,
            "SELECT snapshot FROM memory_audit WHERE id = :id",
            {"id": entries[-1].id},
        )
    ).scalar_one()
    snapshot = dict(last or {})
    derived_from = [str(x) for x in snapshot.pop("derived_from", [])]
    record = MemoryRecordPublic.model_validate({**snapshot, "summary": ""})
    return MemoryDetail(
        record=record,
        embedded=False,
        derived_from=derived_from,
        derived=await derived_records(session, record_id=record_id),
        audit=entries,
    )


def _snapshot(row: Any) -> dict[str, Any]:
    record = to_public(row).model_dump(mode="json", exclude={"summary"})
    record["derived_from"] = list(row.derived_from or [])
    return record


async def write_audit(
    session: AsyncSession,
    *,
    row: Any,
    action: MemoryAction,
    actor: str,
    reason: str | None,
    derived: list[str],
    now: datetime,
) -> MemoryAuditEntry:
    """Record a withdrawal of ``row`` (selected with ``COLUMNS`` and ``derived_from``)."""
    entry = MemoryAuditEntry(
        id=new_ulid(),
        agent=row.agent,
        record_id=row.id,
        action=action,
        actor=actor,
        reason=reason,
        derived=derived,
        at=now,
    )
    await execute(
        session,
        "INSERT INTO memory_audit (id, agent, record_id, action, actor, reason, summary, "
        "snapshot, derived, at) VALUES (:id, :agent, :record, :action, :actor, :reason, "
        ":summary, CAST(:snapshot AS jsonb), CAST(:derived AS varchar[]), :at)",
        {
            "id": entry.id,
            "agent": entry.agent,
            "record": entry.record_id,
            "action": action.value,
            "actor": actor,
            "reason": reason,
            "summary": None,
            "snapshot": json.dumps(_snapshot(row)),
            "derived": derived,
            "at": now,
        },
    )
    return entry


async def forget(
    session: AsyncSession, *, record_id: str, actor: str, reason: str | None, now: datetime
) -> ForgetResult | None:
    """Withdraw a record from recall: mark it forgotten, drop its vector, erase its text.

    The summary is emptied in the record, its formation draft and its audit trail, and
    redacted wherever it was copied (stored prompts, tool results, markers; see
    ``store.queries.erasure``). The audit entry keeps who, when and why.

    Returns:
        The record, its audit entry and the records derived from it (left in place), or
        ``None`` if there is no such record.
    """
    row = (
        await execute(
            session,
            f"SELECT {COLUMNS}, m.derived_from FROM memory_records m WHERE m.id = :id FOR UPDATE",
            {"id": record_id},
        )
    ).first()
    if row is None:
        return None
    derived = await derived_records(session, record_id=record_id)
    if row.forgotten_at is not None:
        entries = await audit_entries(session, record_id=record_id)
        forgets = [e for e in entries if e.action is MemoryAction.FORGET]
        if forgets:
            await session.commit()
            return ForgetResult(
                record=to_public(row), audit=forgets[-1], derived=derived, already=True
            )
    entry = await write_audit(
        session,
        row=row,
        action=MemoryAction.FORGET,
        actor=actor,
        reason=reason,
        derived=[d.id for d in derived],
        now=now,
    )
    # Clearing the vector takes the record out of every nearest-neighbour index, not only
    # out of queries that remember to filter on forgotten_at.
    await execute(
        session,
        "UPDATE memory_records SET forgotten_at = coalesce(forgotten_at, :now), "
        "embedding = NULL, embed_model = NULL WHERE id = :id",
        {"id": record_id, "now": now},
    )
    await erase_memory_text(session, record_id=record_id, summary=row.summary)
    # A forgotten recollection frees what it folded: those records fold again.
    await execute(
        session,
        "UPDATE memory_records SET folded_into = NULL WHERE folded_into = :id",
        {"id": record_id},
    )
    dissolved = await dissolve_above(
        session, record_id=record_id, actor=actor, reason=reason or "forgotten", now=now
    )
    await session.commit()
    record = to_public(row).model_copy(
        update={"forgotten_at": row.forgotten_at or now, "summary": ""}
    )
    derived = [d for d in derived if d.id not in dissolved]
    return ForgetResult(record=record, audit=entry, derived=derived, dissolved=dissolved)


async def dissolve_above(
    session: AsyncSession, *, record_id: str, actor: str, reason: str, now: datetime
) -> list[str]:
    """Forget the recollections folded from ``record_id`` and free their other records.

    Used when a record is withdrawn or its audience changes: a recollection retells its
    records, so it must not outlive what it retells. Each is audited and erased like any
    forgotten record; the records beneath it fold again at the next pass. Returns their IDs,
    nearest first. Does not commit.
    """
    rows = await execute(
        session,
        "WITH RECURSIVE up(id, parent, depth) AS ("
        "  SELECT m.id, m.folded_into, 0 FROM memory_records m WHERE m.id = :id"
        "  UNION ALL"
        "  SELECT p.id, p.folded_into, up.depth + 1 FROM up"
        "  JOIN memory_records p ON p.id = up.parent WHERE up.depth < 10"
        ") SELECT id FROM up WHERE depth > 0 ORDER BY depth",
        {"id": record_id},
    )
    dissolved: list[str] = []
    for above in [str(row.id) for row in rows]:
        row = (
            await execute(
                session,
                f"SELECT {COLUMNS}, m.derived_from FROM memory_records m "
                "WHERE m.id = :id AND m.forgotten_at IS NULL FOR UPDATE",
                {"id": above},
            )
        ).first()
        if row is None:
            continue
        await write_audit(
            session,
            row=row,
            action=MemoryAction.FORGET,
            actor=actor,
            reason=f"folded from {record_id}: {reason}",
            derived=[],
            now=now,
        )
        await execute(
            session,
            "UPDATE memory_records SET forgotten_at = :now, embedding = NULL, "
            "embed_model = NULL WHERE id = :id",
            {"id": above, "now": now},
        )
        await execute(
            session,
            "UPDATE memory_records SET folded_into = NULL WHERE folded_into = :id",
            {"id": above},
        )
        await erase_memory_text(session, record_id=above, summary=row.summary)
        dissolved.append(above)
    return dissolved


async def agent_exists(session: AsyncSession, *, agent: str) -> bool:
    """Whether the agent has a record."""
    row = await execute(session, "SELECT 1 FROM agents WHERE handle = :a", {"a": agent})
    return row.first() is not None
