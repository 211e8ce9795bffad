"""Goals and quick facts: what the agent set out to do, and its small scratchpad."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from sqlalchemy import delete, func
from sqlalchemy.dialects.postgresql import insert
from sqlmodel import col, select
from sqlmodel.ext.asyncio.session import AsyncSession

from schemas.autonomy import GoalPublic, GoalStatus, QuickFact
from schemas.ids import new_ulid
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
    )


async def add_goal(
    session: AsyncSession, *, agent: str, description: str, created_in: str | None, at: datetime
) -> GoalPublic:
    """Create an open goal."""
    row = GoalRow(
        id=new_ulid(),
        agent=agent,
        description=description,
        status=GoalStatus.OPEN.value,
        created_in=created_in,
        created_at=at,
        updated_at=at,
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


async def count_open_goals(session: AsyncSession, *, agent: str) -> int:
    """How many goals still stand."""
    result = await session.exec(
        select(func.count())
        .select_from(GoalRow)
        .where(GoalRow.agent == agent, col(GoalRow.status).in_([s.value for s in OPEN_STATUSES]))
    )
    return int(result.one())


async def update_goal(
    session: AsyncSession,
    *,
    agent: str,
    goal_id: str,
    status: GoalStatus | None,
    note: str | None,
    at: datetime,
) -> tuple[GoalPublic, GoalStatus] | None:
    """Change a goal's status or note; returns it and its previous status (``None``: not found)."""
    row = await session.get(GoalRow, goal_id)
    if row is None or row.agent != agent:
        return None
    before = GoalStatus(row.status)
    if status is not None:
        row.status = status.value
        row.closed_at = at if status.closed else None
    if note is not None:
        row.note = note
    row.updated_at = at
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
