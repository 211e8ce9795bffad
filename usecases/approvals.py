"""Tool approvals from a person's side: what waits, and the decision that ends the wait.

A tool call that needs approval waits in its activation (``workflows.pipeline.approval``).
:func:`pending` lists what waits; :func:`decide` approves or refuses one by sending the
``decide_approval`` update to the activation that waits, which records the decision and then
runs the tool, or hands the refusal to the model. Every door calls these: the CLI, the console,
the web API (scoped to its tenant's channels with ``channel_prefix``).

Deciding twice the same way is answered with the recorded decision; the other way is refused.
"""

from __future__ import annotations

from datetime import datetime

from temporalio.client import Client, WorkflowUpdateFailedError
from temporalio.exceptions import ApplicationError
from temporalio.service import RPCError, RPCStatusCode

from contract import names
from schemas.approvals import (
    MAX_WHY_CHARS,
    ApprovalDecision,
    ApprovalStatus,
    DecideApprovalInput,
    PendingApproval,
)
from schemas.ids import check_handle, check_ulid
from schemas.settings import Settings
from schemas.text import clean_name, clean_text
from store.db import Database
from store.queries import approvals as records
from store.tables.approvals import ApprovalRow
from store.tables.columns import utcnow
from temporal.client import connect
from usecases.agents import agent_exists
from usecases.errors import TemporalUnreachableError, UnknownAgentError, UseCaseError
from usecases.store import open_store

OPERATOR = "operator"
"""Who decides when a door names nobody."""

ENDED = "its activation ended before anyone decided"
"""``why`` of an approval whose activation ended while it was pending (recorded as expired)."""

LIST_LIMIT = 200
"""The most approvals one listing shows."""


class ApprovalError(UseCaseError):
    """An approval cannot be decided as asked; the message says why, in one line."""


class UnknownApprovalError(ApprovalError):
    """No approval has this ID (or none the caller may see)."""

    def __init__(self, approval_id: str) -> None:
        super().__init__(
            f"there is no approval {approval_id}: `persyn approvals list` shows the waiting ones"
        )
        self.approval_id = approval_id


class OtherAgentsError(ApprovalError):
    """The approval exists but is another agent's."""

    def __init__(self, approval_id: str, agent: str) -> None:
        super().__init__(
            f"approval {approval_id} is not one of {agent}'s: "
            f"`persyn approvals list --agent {agent}` shows theirs"
        )
        self.approval_id = approval_id
        self.agent = agent


class DecidedError(ApprovalError):
    """The approval was decided the other way, expired, or its activation ended."""


def _visible(row: ApprovalRow | None, channel_prefix: str | None) -> ApprovalRow | None:
    if row is None or (channel_prefix is not None and not row.channel.startswith(channel_prefix)):
        return None
    return row


async def list_approvals(
    *,
    db: Database,
    agent: str | None = None,
    channel_prefix: str | None = None,
    every_status: bool = False,
    now: datetime | None = None,
) -> list[PendingApproval]:
    """Approvals oldest first: those still waiting, or (``every_status``) every one.

    Args:
        db: The database.
        agent: Only this agent's.
        channel_prefix: Only those asked on channels whose key starts so (a web tenant's).
        every_status: Decided and expired ones too, and waiting ones past their deadline.
        now: The time a waiting approval's deadline is compared with (default: now).
    """
    if agent is not None:
        check_handle(agent)
    statuses = list(ApprovalStatus) if every_status else [ApprovalStatus.PENDING]
    async with db.autocommit() as session:
        rows = await records.list_approvals(
            session,
            agent=agent,
            channel_prefix=channel_prefix,
            statuses=statuses,
            after=None if every_status else (now or utcnow()),
            limit=LIST_LIMIT,
        )
    return [records.approval_public(row) for row in rows]


async def get_approval(
    *, db: Database, approval_id: str, channel_prefix: str | None = None
) -> PendingApproval:
    """One approval.

    Raises:
        InvalidIdError: ``approval_id`` is not a ULID.
        UnknownApprovalError: no such approval (or not on the caller's channels).
    """
    found = check_ulid(approval_id, what="approval id")
    async with db.autocommit() as session:
        row = _visible(await records.get_approval(session, approval_id=found), channel_prefix)
    if row is None:
        raise UnknownApprovalError(found)
    return records.approval_public(row)


async def decide_approval(
    *,
    db: Database,
    client: Client,
    approval_id: str,
    approve: bool,
    by: str,
    why: str | None = None,
    agent: str | None = None,
    channel_prefix: str | None = None,
) -> ApprovalDecision:
    """Approve or refuse one approval; returns the decision as recorded.

    Raises:
        InvalidIdError: ``approval_id`` is not a ULID, or ``agent`` is not a handle.
        InvalidTextError: ``by`` or ``why`` is empty, too long or holds a control character.
        UnknownApprovalError: no such approval (or not on the caller's channels).
        OtherAgentsError: the approval is another agent's.
        DecidedError: it was decided the other way, expired, or its activation ended.
        TemporalUnreachableError: Temporal did not answer.
    """
    found = check_ulid(approval_id, what="approval id")
    who = clean_name(by, what="by")
    reason = clean_text(why, what="why", max_chars=MAX_WHY_CHARS) if why is not None else None
    owner = check_handle(agent) if agent is not None else None
    async with db.autocommit() as session:
        row = _visible(await records.get_approval(session, approval_id=found), channel_prefix)
    if row is None:
        raise UnknownApprovalError(found)
    if owner is not None and row.agent != owner:
        raise OtherAgentsError(found, owner)
    recorded = records.decision_of(row)
    if recorded is not None:
        return _same_or_refuse(recorded, approve)
    data = DecideApprovalInput(
        approval_id=found, approve=approve, by=who, why=reason, agent=row.agent
    )
    try:
        return await _send(client, row.activation_id, data)
    except WorkflowUpdateFailedError as err:
        cause = err.cause
        message = cause.message if isinstance(cause, ApplicationError) else str(cause or err)
        raise DecidedError(message.splitlines()[0] if message else str(err)) from None
    except RPCError as err:
        if not _run_is_gone(err):
            raise TemporalUnreachableError(
                f"cannot reach the activation that waits for approval {found}: {err.message}"
            ) from None
    return await _ended(db, row, approve)


async def _send(client: Client, activation_id: str, data: DecideApprovalInput) -> ApprovalDecision:
    verdict = "approve" if data.approve else "refuse"
    handle = client.get_workflow_handle(names.activation_workflow_id(activation_id))
    decision: ApprovalDecision = await handle.execute_update(
        names.DECIDE_APPROVAL,
        data,
        # A retry (or a second click) is the same update: answered, never run again.
        id=f"approval-{data.approval_id}-{verdict}",
        result_type=ApprovalDecision,
    )
    return decision


def _run_is_gone(err: RPCError) -> bool:
    """Whether the activation is no longer running (completed, failed, terminated, unknown)."""
    return err.status is RPCStatusCode.NOT_FOUND or "already completed" in err.message


def _same_or_refuse(recorded: ApprovalDecision, approve: bool) -> ApprovalDecision:
    if recorded.approved == approve:
        return recorded
    when = recorded.decided_at.strftime("%Y-%m-%d %H:%M:%S UTC")
    if recorded.status is ApprovalStatus.EXPIRED:
        raise DecidedError(
            f"approval {recorded.approval_id} expired at {when}: {recorded.why or 'refused'}"
        )
    raise DecidedError(
        f"approval {recorded.approval_id} was already {recorded.status.value} by "
        f"{recorded.decided_by} at {when}"
    )


async def _ended(db: Database, row: ApprovalRow, approve: bool) -> ApprovalDecision:
    """The activation is gone: answer from the record, marking a stale pending one expired."""
    stale = ApprovalDecision(
        approval_id=row.id,
        agent=row.agent,
        tool=row.tool,
        status=ApprovalStatus.EXPIRED,
        decided_by="default",
        decided_at=utcnow(),
        why=ENDED,
    )
    async with db.session() as session:
        # A decision recorded meanwhile is kept: the record keeps its first decision.
        current = await records.record_decision(session, decision=stale)
    recorded = (records.decision_of(current) if current is not None else None) or stale
    if recorded.status is ApprovalStatus.EXPIRED and recorded.why == ENDED:
        raise DecidedError(f"approval {row.id}: {ENDED}; nothing will run")
    return _same_or_refuse(recorded, approve)


async def pending(settings: Settings, agent: str | None = None) -> list[PendingApproval]:
    """What waits for a decision now, oldest first (``agent``'s only, if named).

    Raises:
        InvalidIdError: ``agent`` is not a handle.
        UnknownAgentError: no such agent.
    """
    async with open_store(settings, pool_size=1) as db:
        await _known(db, agent)
        return await list_approvals(db=db, agent=agent)


async def history(settings: Settings, agent: str | None = None) -> list[PendingApproval]:
    """Every approval, decided ones too, oldest first (``agent``'s only, if named).

    Raises:
        InvalidIdError: ``agent`` is not a handle.
        UnknownAgentError: no such agent.
    """
    async with open_store(settings, pool_size=1) as db:
        await _known(db, agent)
        return await list_approvals(db=db, agent=agent, every_status=True)


async def _known(db: Database, agent: str | None) -> None:
    if agent is not None and not await agent_exists(db=db, handle=check_handle(agent)):
        raise UnknownAgentError(agent)


async def decide(
    settings: Settings,
    approval_id: str,
    approve: bool,
    by: str,
    why: str | None = None,
    agent: str | None = None,
) -> ApprovalDecision:
    """Approve or refuse one approval as ``by``; returns the decision as recorded.

    See :func:`decide_approval` for what it raises.
    """
    async with open_store(settings, pool_size=1) as db:
        check_ulid(approval_id, what="approval id")
        return await decide_approval(
            db=db,
            client=await connect(settings),
            approval_id=approval_id,
            approve=approve,
            by=by,
            why=why,
            agent=agent,
        )
