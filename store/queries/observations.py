"""Observations: write facts, supersede them, and find a subject's active and similar facts.

Nothing here deletes a row: superseding marks the old record and links the new one to it, so
the chain of what was believed, and why it changed, survives every update and retraction.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from datetime import datetime

from sqlalchemy import ColumnElement, or_, text
from sqlalchemy.dialects.postgresql import insert
from sqlmodel import col, select
from sqlmodel.ext.asyncio.session import AsyncSession

from schemas.ids import new_ulid
from schemas.observations import Observation, ObservationProposal
from store.lane import Lane
from store.tables.columns import utcnow
from store.tables.observations import ObservationBriefRow, ObservationRow


class ObservationConflictError(Exception):
    """The observation to supersede is missing, another agent's, or no longer active."""


_OBSERVATION_FIELDS = (
    "id",
    "person_id",
    "type",
    "value",
    "trust",
    "status",
    "supersedes",
    "observed_at",
    "reason",
)
"""The stored columns the wire view carries."""


def to_observation(row: ObservationRow) -> Observation:
    """The wire view of a stored row."""
    return Observation.model_validate({k: getattr(row, k) for k in _OBSERVATION_FIELDS})


async def _retire(
    session: AsyncSession, *, agent: str, observation_id: str, at: datetime, reason: str | None
) -> ObservationRow:
    # Row lock: two reconciliations of one subject must not both supersede the same fact.
    row = (
        await session.exec(
            select(ObservationRow).where(ObservationRow.id == observation_id).with_for_update()
        )
    ).one_or_none()
    if row is None or row.agent != agent:
        raise ObservationConflictError(f"no observation {observation_id} for agent {agent}")
    if row.status != "active":
        raise ObservationConflictError(f"observation {observation_id} is already superseded")
    row.status = "superseded"
    row.superseded_at = at
    if reason:
        row.reason = reason
    session.add(row)
    return row


async def record_observation(
    session: AsyncSession,
    *,
    agent: str,
    proposal: ObservationProposal,
    embedding: Sequence[float] | None,
    supersedes: str | None = None,
    reason: str | None = None,
    observation_id: str | None = None,
) -> str:
    """Store a fact as active, retiring the one it ``supersedes`` in the same transaction.

    Args:
        session: An open session; committed here.
        agent: The agent whose belief this is.
        proposal: The fact, its subject, trust label and source.
        embedding: Its vector, if the encoder made one.
        supersedes: The active observation it replaces.
        reason: Why it was written.
        observation_id: The new record's ID (default: a fresh one).

    Raises:
        ObservationConflictError: ``supersedes`` is not an active observation of this agent
            about the same subject.
    """
    now = utcnow()
    if supersedes is not None:
        old = await _retire(session, agent=agent, observation_id=supersedes, at=now, reason=None)
        if old.person_id != proposal.person_id:
            raise ObservationConflictError(
                f"observation {supersedes} is about another subject; supersede only its own"
            )
    row = ObservationRow(
        id=observation_id or new_ulid(),
        agent=agent,
        person_id=proposal.person_id,
        type=proposal.type,
        value=proposal.value,
        observed_at=proposal.observed_at,
        conversation_id=proposal.source.conversation_id,
        turn_first=proposal.source.turn_first,
        turn_last=proposal.source.turn_last,
        trust=proposal.trust,
        status="active",
        supersedes=supersedes,
        reason=reason,
        embedding=list(embedding) if embedding is not None else None,
        created_at=now,
    )
    session.add(row)
    await session.commit()
    return row.id


async def find_observation(
    session: AsyncSession, *, agent: str, observation_id: str
) -> Observation | None:
    """The agent's observation with this ID, whatever its status."""
    row = await session.get(ObservationRow, observation_id)
    return to_observation(row) if row is not None and row.agent == agent else None


async def retract_observation(
    session: AsyncSession, *, agent: str, observation_id: str, reason: str
) -> None:
    """Supersede a fact with nothing: it is no longer believed, and the record stays.

    Raises:
        ObservationConflictError: the observation is missing or no longer active.
    """
    await _retire(session, agent=agent, observation_id=observation_id, at=utcnow(), reason=reason)
    await session.commit()


async def active_observations(
    session: AsyncSession, *, agent: str, person_ids: Sequence[str | None]
) -> list[Observation]:
    """The active facts about each subject named (``None`` is the agent itself), oldest first."""
    named = [p for p in person_ids if p is not None]
    subject: ColumnElement[bool] = col(ObservationRow.person_id).in_(named)
    if None in person_ids:  # the agent itself, when asked for
        subject = or_(subject, col(ObservationRow.person_id).is_(None))
    rows = (
        await session.exec(
            select(ObservationRow)
            .where(ObservationRow.agent == agent, ObservationRow.status == "active", subject)
            .order_by(col(ObservationRow.observed_at), col(ObservationRow.id))
        )
    ).all()
    return [to_observation(r) for r in rows]


# The context block's read, on the driver lane: every prompt makes it. Each person's name is
# joined in, where the session path looked the people up one by one.
_ACTIVE_NAMED = """
    SELECT o.id, o.person_id, o.type, o.value, o.trust, o.status, o.supersedes, o.observed_at,
           o.reason, p.display_name
      FROM observations AS o
      LEFT JOIN people AS p ON p.id = o.person_id
     WHERE o.agent = %(agent)s AND o.status = 'active'
       AND (o.person_id = ANY(CAST(%(named)s AS varchar[]))
            OR (%(itself)s AND o.person_id IS NULL))
     ORDER BY o.observed_at, o.id
"""


async def active_observations_on(
    lane: Lane, *, agent: str, person_ids: Sequence[str | None]
) -> tuple[list[Observation], dict[str, str]]:
    """:func:`active_observations` on the driver lane, with the names of the people they are about.

    Returns:
        The facts, oldest first, and the display name of each person among their subjects (the
        person's ID if no such person is stored).
    """
    rows = await lane.rows(
        _ACTIVE_NAMED,
        {
            "agent": agent,
            "named": [p for p in person_ids if p is not None],
            "itself": None in person_ids,
        },
    )
    facts = [Observation.model_validate({k: row[k] for k in _OBSERVATION_FIELDS}) for row in rows]
    names = {
        row["person_id"]: row["person_id"] if row["display_name"] is None else row["display_name"]
        for row in rows
        if row["person_id"] is not None
    }
    return facts, names


_SIMILAR = text(
    """
    SELECT id FROM observations
     WHERE agent = :agent AND status = 'active'
       AND person_id IS NOT DISTINCT FROM CAST(:person_id AS varchar)
     ORDER BY (type = :type) DESC,
              embedding <=> CAST(:v AS vector) NULLS LAST,
              observed_at DESC
     LIMIT :limit
    """
)


async def similar_active(
    session: AsyncSession,
    *,
    agent: str,
    person_id: str | None,
    type_label: str,
    embedding: Sequence[float] | None,
    limit: int = 5,
) -> list[Observation]:
    """The subject's active facts most like a proposal: same type first, then by vector.

    Only the subject's own facts are candidates, so reconciliation never sees anyone else's.
    Without a vector (no encoder) they rank by type, then newest first.
    """
    vector = None if embedding is None else "[" + ",".join(repr(float(x)) for x in embedding) + "]"
    params = {"agent": agent, "person_id": person_id, "type": type_label, "v": vector}
    connection = await session.connection()
    ids = (await connection.execute(_SIMILAR, {**params, "limit": limit})).all()
    if not ids:
        return []
    order = {str(i[0]): n for n, i in enumerate(ids)}
    rows = (
        await session.exec(select(ObservationRow).where(col(ObservationRow.id).in_(list(order))))
    ).all()
    return [to_observation(r) for r in sorted(rows, key=lambda r: order[r.id])]


async def supersede_chain(
    session: AsyncSession, *, agent: str, observation_id: str
) -> list[Observation]:
    """The record and every record it replaced, newest first, back to the first belief."""
    chain: list[Observation] = []
    current: str | None = observation_id
    while current is not None and len(chain) < 10_000:
        row = await session.get(ObservationRow, current)
        if row is None or row.agent != agent:
            break
        chain.append(to_observation(row))
        current = row.supersedes
    return chain


def brief_subject(person_id: str | None) -> str:
    """The key a subject's brief is kept under: the person's ID, or ``self``."""
    return person_id or "self"


def fingerprint(observations: Sequence[Observation]) -> str:
    """A digest of a set of active observations: it changes whenever one is added or retired."""
    return hashlib.sha256(" ".join(sorted(o.id for o in observations)).encode()).hexdigest()


async def cached_brief(
    session: AsyncSession, *, agent: str, person_id: str | None, digest: str
) -> str | None:
    """The brief kept for the subject, if it was written from the facts ``digest`` names."""
    row = await session.get(ObservationBriefRow, (agent, brief_subject(person_id)))
    return row.brief if row is not None and row.fingerprint == digest else None


async def keep_brief(
    session: AsyncSession, *, agent: str, person_id: str | None, digest: str, brief: str
) -> None:
    """Keep ``brief`` as the subject's dossier for the facts ``digest`` names."""
    stmt = insert(ObservationBriefRow).values(
        agent=agent,
        subject=brief_subject(person_id),
        fingerprint=digest,
        brief=brief,
        written_at=utcnow(),
    )
    await session.exec(
        stmt.on_conflict_do_update(
            index_elements=["agent", "subject"],
            set_={
                "fingerprint": stmt.excluded.fingerprint,
                "brief": stmt.excluded.brief,
                "written_at": stmt.excluded.written_at,
            },
        )
    )
    await session.commit()
