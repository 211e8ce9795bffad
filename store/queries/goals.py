"""Goals and quick facts: what the agent set out to do, and its small scratchpad."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import delete, func
from sqlalchemy.dialects.postgresql import insert
from sqlmodel import col, select
from sqlmodel.ext.asyncio.session import AsyncSession

from schemas.autonomy import GoalKind, GoalPublic, GoalStatus, QuickFact
from schemas.ids import new_ulid
from store.lane import Lane
from store.tables.autonomy import GoalRow, QuickFactRow

OPEN_STATUSES = (GoalStatus.OPEN, GoalStatus.IN_PROGRESS)


def goal_public(row: GoalRow) -> GoalPublic:
    """The wire form of a goal row."""
    return GoalPublic(
        goal_id=row.id,
        description=row.description,
        status=GoalStatus(row.status),
        created_at=row.created_at,
        updated_at=row.updated_at,
        note=row.note,
        title=row.title,
        kind=GoalKind(row.kind),
        progress_signal=row.progress_signal,
        set_by="operator" if row.set_by == "operator" else "agent",
        state=row.state,
        next_step=row.next_step,
        last_step=row.last_step,
        last_step_at=row.last_step_at,
        blocked_by=row.blocked_by,
        moved_at=row.moved_at or row.updated_at,
    )


@dataclass(frozen=True)
class Constitution:
    """What a goal is: set as it is created, changed afterwards only by the operator."""

    description: str
    title: str | None = None
    kind: GoalKind = GoalKind.GOAL
    progress_signal: str | None = None


async def add_goal(
    session: AsyncSession,
    *,
    agent: str,
    description: str,
    created_in: str | None,
    at: datetime,
    constitution: Constitution | None = None,
    set_by: str = "agent",
) -> GoalPublic:
    """Create an open goal (``constitution`` overrides ``description`` when given)."""
    what = constitution or Constitution(description=description)
    row = GoalRow(
        id=new_ulid(),
        agent=agent,
        description=what.description,
        title=what.title,
        kind=what.kind.value,
        progress_signal=what.progress_signal,
        set_by=set_by,
        status=GoalStatus.OPEN.value,
        created_in=created_in,
        created_at=at,
        updated_at=at,
        moved_at=at,
    )
    session.add(row)
    await session.commit()
    return goal_public(row)


async def list_goals(
    session: AsyncSession,
    *,
    agent: str,
    statuses: Sequence[GoalStatus] = OPEN_STATUSES,
    limit: int = 50,
) -> list[GoalPublic]:
    """The agent's goals in these statuses, oldest first."""
    rows = await session.exec(
        select(GoalRow)
        .where(GoalRow.agent == agent, col(GoalRow.status).in_([s.value for s in statuses]))
        .order_by(col(GoalRow.id))
        .limit(limit)
    )
    return [goal_public(row) for row in rows]


# The context source's copy of :func:`list_goals`, on the driver lane: every prompt reads the
# open goals, and through a session the ORM's statement and row objects were most of its CPU.
_LIST_GOALS = """
    SELECT * FROM goals
     WHERE agent = %(agent)s AND status = ANY(%(statuses)s::varchar[])
     ORDER BY id
     LIMIT %(limit)s::integer
"""


async def list_goals_on(
    lane: Lane,
    *,
    agent: str,
    statuses: Sequence[GoalStatus] = OPEN_STATUSES,
    limit: int = 50,
) -> list[GoalPublic]:
    """:func:`list_goals` as one statement on the driver lane, for the prompt's goals."""
    rows = await lane.rows(
        _LIST_GOALS, {"agent": agent, "statuses": [s.value for s in statuses], "limit": limit}
    )
    return [goal_public(GoalRow(**row)) for row in rows]


async def get_goal(session: AsyncSession, *, agent: str, goal_id: str) -> GoalPublic | None:
    """The agent's goal ``goal_id``, in any status, or ``None``."""
    row = await session.get(GoalRow, goal_id)
    return goal_public(row) if row is not None and row.agent == agent else None


async def count_open_goals(session: AsyncSession, *, agent: str) -> int:
    """How many goals still stand."""
    result = await session.exec(
        select(func.count())
        .select_from(GoalRow)
        .where(GoalRow.agent == agent, col(GoalRow.status).in_([s.value for s in OPEN_STATUSES]))
    )
    return int(result.one())


@dataclass(frozen=True)
class Progress:
    """The operational fields a change sets (``None``: left as they are)."""

    state: str | None = None
    next_step: str | None = None
    last_step: str | None = None
    blocked_by: str | None = None


async def update_goal(
    session: AsyncSession,
    *,
    agent: str,
    goal_id: str,
    status: GoalStatus | None,
    note: str | None,
    at: datetime,
    progress: Progress | None = None,
) -> tuple[GoalPublic, GoalStatus] | None:
    """Change a goal's status, note or operational fields; returns it and its previous status.

    ``None`` when the agent has no such goal. Any change moves the goal (``moved_at``), so it
    is no longer stalled.
    """
    row = await session.get(GoalRow, goal_id)
    if row is None or row.agent != agent:
        return None
    before = GoalStatus(row.status)
    if status is not None:
        row.status = status.value
        row.closed_at = at if status.closed else None
    if note is not None:
        row.note = note
    step = progress or Progress()
    if step.state is not None:
        row.state = step.state
    if step.next_step is not None:
        row.next_step = step.next_step
    if step.last_step is not None:
        row.last_step, row.last_step_at = step.last_step, at
    if step.blocked_by is not None:
        row.blocked_by = step.blocked_by or None  # "" clears it
    row.updated_at = row.moved_at = at
    session.add(row)
    await session.commit()
    return goal_public(row), before


# -- quick facts ----------------------------------------------------------------------------------


async def count_facts(session: AsyncSession, *, agent: str, subject: str) -> int:
    """How many facts the agent keeps about ``subject``."""
    result = await session.exec(
        select(func.count())
        .select_from(QuickFactRow)
        .where(QuickFactRow.agent == agent, QuickFactRow.subject == subject)
    )
    return int(result.one())


async def put_fact(
    session: AsyncSession, *, agent: str, subject: str, key: str, value: str, at: datetime
) -> bool:
    """Set a fact; returns whether it replaced an earlier value."""
    existing = (
        await session.exec(
            select(QuickFactRow.id).where(
                QuickFactRow.agent == agent,
                QuickFactRow.subject == subject,
                QuickFactRow.key == key,
            )
        )
    ).first()
    await session.exec(
        insert(QuickFactRow)
        .values(id=new_ulid(), agent=agent, subject=subject, key=key, value=value, updated_at=at)
        .on_conflict_do_update(constraint="uq_quick_fact", set_={"value": value, "updated_at": at})
    )
    await session.commit()
    return existing is not None


async def get_facts(
    session: AsyncSession, *, agent: str, subjects: Sequence[str] | None = None
) -> list[QuickFact]:
    """Facts about these subjects (all of them by default), by subject then key."""
    query = select(QuickFactRow).where(QuickFactRow.agent == agent)
    if subjects is not None:
        query = query.where(col(QuickFactRow.subject).in_(list(subjects)))
    rows = await session.exec(query.order_by(col(QuickFactRow.subject), col(QuickFactRow.key)))
    return [
        QuickFact(subject=r.subject, key=r.key, value=r.value, updated_at=r.updated_at)
        for r in rows
    ]


# The context source's copy of :func:`get_facts`, on the driver lane (see ``_LIST_GOALS``).
_GET_FACTS = """
    SELECT subject, key, value, updated_at
      FROM quick_facts
     WHERE agent = %(agent)s AND subject = ANY(%(subjects)s::varchar[])
     ORDER BY subject, key
"""


async def get_facts_on(lane: Lane, *, agent: str, subjects: Sequence[str]) -> list[QuickFact]:
    """:func:`get_facts` about these subjects as one statement on the driver lane."""
    rows = await lane.rows(_GET_FACTS, {"agent": agent, "subjects": list(subjects)})
    return [
        QuickFact(
            subject=row["subject"], key=row["key"], value=row["value"], updated_at=row["updated_at"]
        )
        for row in rows
    ]


async def delete_fact(session: AsyncSession, *, agent: str, subject: str, key: str) -> bool:
    """Forget a fact; returns whether there was one."""
    result = await session.exec(
        delete(QuickFactRow).where(
            col(QuickFactRow.agent) == agent,
            col(QuickFactRow.subject) == subject,
            col(QuickFactRow.key) == key,
        )
    )
    await session.commit()
    return bool(result.rowcount)
