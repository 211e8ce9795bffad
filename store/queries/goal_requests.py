"""Owner requests: changes to a goal's constitutional fields the agent asked for.

The operator decides each: approving one applies it, refusing one leaves the goal as it was.
Either is final.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from sqlmodel import col, select
from sqlmodel.ext.asyncio.session import AsyncSession

from schemas.autonomy import GoalKind, GoalPublic, GoalRequest, GoalRequestStatus
from schemas.ids import new_ulid
from store.queries.goals import goal_public
from store.tables.autonomy import GoalRequestRow, GoalRow


class GoalRequestError(ValueError):
    """A request cannot be decided as asked; the message says why."""


def request_public(row: GoalRequestRow) -> GoalRequest:
    """The wire form of a request row."""
    return GoalRequest(
        request_id=row.id,
        goal_id=row.goal_id,
        field=row.field,
        value=row.value,
        reason=row.reason,
        status=GoalRequestStatus(row.status),
        created_at=row.created_at,
        decided_at=row.decided_at,
        decided_by=row.decided_by,
    )


async def file_request(
    session: AsyncSession,
    *,
    agent: str,
    goal_id: str,
    field: str,
    value: str,
    reason: str | None,
    asked_in: str | None,
    at: datetime,
) -> GoalRequest:
    """Record the agent's request; the goal is unchanged until the operator approves it."""
    row = GoalRequestRow(
        id=new_ulid(),
        agent=agent,
        goal_id=goal_id,
        field=field,
        value=value,
        reason=reason,
        status=GoalRequestStatus.PENDING.value,
        asked_in=asked_in,
        created_at=at,
    )
    session.add(row)
    await session.flush()
    return request_public(row)


async def list_requests(
    session: AsyncSession, *, agent: str, statuses: Sequence[GoalRequestStatus]
) -> list[GoalRequest]:
    """The agent's requests in ``statuses``, oldest first."""
    rows = await session.exec(
        select(GoalRequestRow)
        .where(
            GoalRequestRow.agent == agent,
            col(GoalRequestRow.status).in_([s.value for s in statuses]),
        )
        .order_by(col(GoalRequestRow.id))
    )
    return [request_public(r) for r in rows]


def apply_field(row: GoalRow, field: str, value: str) -> None:
    """Set one constitutional field of ``row``.

    Raises:
        GoalRequestError: ``kind`` is not goal or interest, or the field is not constitutional.
    """
    if field == "kind":
        if value not in set(GoalKind):
            raise GoalRequestError(f"a goal's kind is goal or interest, not {value[:40]!r}")
        row.kind = value
    elif field == "title":
        row.title = value
    elif field == "description":
        row.description = value
    elif field == "progress_signal":
        row.progress_signal = value
    else:
        raise GoalRequestError(f"{field!r} is not a constitutional field of a goal")


async def decide(
    session: AsyncSession,
    *,
    agent: str,
    request_id: str,
    approve: bool,
    by: str,
    at: datetime,
) -> tuple[GoalRequest, GoalPublic]:
    """Approve (apply) or refuse a pending request; returns it and the goal as it now is.

    Does not commit.

    Raises:
        GoalRequestError: No such request, or it was already decided.
    """
    row = await session.get(GoalRequestRow, request_id, with_for_update=True)
    if row is None or row.agent != agent:
        raise GoalRequestError(
            f"there is no request {request_id}: `persyn goals requests` lists them"
        )
    if row.status != GoalRequestStatus.PENDING.value:
        raise GoalRequestError(f"request {request_id} was already {row.status}")
    goal = await session.get(GoalRow, row.goal_id, with_for_update=True)
    assert goal is not None  # the request goes with its goal (ON DELETE CASCADE)
    if approve:
        apply_field(goal, row.field, row.value)
        goal.updated_at = at
        session.add(goal)
    row.status = (GoalRequestStatus.APPROVED if approve else GoalRequestStatus.REFUSED).value
    row.decided_at, row.decided_by = at, by
    session.add(row)
    await session.flush()
    return request_public(row), goal_public(goal)
