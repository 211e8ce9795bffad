"""Tool approvals: add one pending, list them, record its decision once; whom the agent wrote to."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from sqlalchemy.dialects.postgresql import insert
from sqlmodel import col, select
from sqlmodel.ext.asyncio.session import AsyncSession

from schemas.approvals import ApprovalDecision, ApprovalStatus, AskApprovalInput, PendingApproval
from store.sql import execute
from store.tables.approvals import ApprovalRow


async def add_pending(
    session: AsyncSession, *, ask: AskApprovalInput, tool: str, arguments: str
) -> None:
    """Record a pending approval once (a retried step finds it there); commits."""
    await session.exec(
        insert(ApprovalRow)
        .values(
            id=ask.approval_id,
            agent=ask.agent,
            activation_id=ask.activation_id,
            call_id=ask.call_id,
            tool=tool,
            arguments=arguments,
            reason=ask.reason,
            asked_by=ask.asked_by,
            channel=ask.channel,
            created_at=ask.created_at,
            deadline=ask.deadline,
            status=ApprovalStatus.PENDING.value,
        )
        .on_conflict_do_nothing(index_elements=["id"])
    )
    await session.commit()


async def get_approval(session: AsyncSession, *, approval_id: str) -> ApprovalRow | None:
    """One approval."""
    return await session.get(ApprovalRow, approval_id)


async def list_approvals(
    session: AsyncSession,
    *,
    agent: str | None = None,
    channel_prefix: str | None = None,
    statuses: Sequence[ApprovalStatus] = (ApprovalStatus.PENDING,),
    after: datetime | None = None,
    limit: int = 200,
) -> list[ApprovalRow]:
    """Approvals, oldest first, filtered by what is given.

    Of ``agent``, on channels whose key starts with ``channel_prefix``, in ``statuses``, and
    whose deadline is later than ``after``.
    """
    query = select(ApprovalRow).where(col(ApprovalRow.status).in_([s.value for s in statuses]))
    if agent is not None:
        query = query.where(ApprovalRow.agent == agent)
    if channel_prefix is not None:
        query = query.where(col(ApprovalRow.channel).startswith(channel_prefix, autoescape=True))
    if after is not None:
        query = query.where(col(ApprovalRow.deadline) > after)
    rows = await session.exec(
        query.order_by(col(ApprovalRow.created_at), col(ApprovalRow.id)).limit(limit)
    )
    return list(rows)


async def record_decision(
    session: AsyncSession, *, decision: ApprovalDecision
) -> ApprovalRow | None:
    """Record ``decision`` on a pending approval; a decided one keeps its first decision.

    Commits. Returns the row as it now is (``None``: no such approval).
    """
    row = await session.get(ApprovalRow, decision.approval_id, with_for_update=True)
    if row is None:
        return None
    if row.status == ApprovalStatus.PENDING.value:
        row.status = decision.status.value
        row.decided_by = decision.decided_by
        row.decided_at = decision.decided_at
        row.why = decision.why
        session.add(row)
    await session.commit()
    await session.refresh(row)
    return row


async def has_talked_with(session: AsyncSession, *, agent: str, person_id: str) -> bool:
    """Whether the person ever said something to the agent (in any conversation).

    Someone who wrote to the agent (the person asking it now included) is not a stranger to
    write to; a contact the operator added, or one only named, is until they speak.
    """
    found = await execute(
        session,
        "SELECT EXISTS (SELECT 1 FROM dialog_turns WHERE agent = :agent "
        "AND person_id = :person AND role = 'person')",
        {"agent": agent, "person": person_id},
    )
    return bool(found.scalar())


def approval_public(row: ApprovalRow) -> PendingApproval:
    """The stored approval as the doors show it."""
    return PendingApproval(
        approval_id=row.id,
        agent=row.agent,
        activation_id=row.activation_id,
        call_id=row.call_id,
        tool=row.tool,
        arguments=row.arguments,
        reason=row.reason,
        asked_by=row.asked_by,
        channel=row.channel,
        created_at=row.created_at,
        deadline=row.deadline,
        status=ApprovalStatus(row.status),
        decided_by=row.decided_by,
        decided_at=row.decided_at,
        why=row.why,
    )


def decision_of(row: ApprovalRow) -> ApprovalDecision | None:
    """The recorded decision of a decided approval (``None`` while it is pending)."""
    status = ApprovalStatus(row.status)
    if not status.decided or row.decided_at is None:
        return None
    return ApprovalDecision(
        approval_id=row.id,
        agent=row.agent,
        tool=row.tool,
        status=status,
        decided_by=row.decided_by or "",
        decided_at=row.decided_at,
        why=row.why,
    )
