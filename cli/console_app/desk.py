"""The console's approvals desk: the approvals use case, over the session's store and client.

What waits is read with :func:`usecases.approvals.list_approvals` and decisions are sent with
:func:`usecases.approvals.decide_approval`, as ``persyn approvals`` and the web API do; the
console's own store and Temporal client are used, so asking every few seconds opens nothing.
"""

from __future__ import annotations

from collections.abc import Sequence

from cli.console_app.approvals import WaitingAction
from cli.console_app.session import ConsoleSession
from schemas.approvals import PendingApproval
from usecases.approvals import decide_approval, list_approvals

SUMMARY_CHARS = 160
"""How much of a call's arguments the prompt shows."""


def waiting_action(approval: PendingApproval) -> WaitingAction:
    """A pending approval as the console's prompt shows it."""
    arguments = approval.arguments[:SUMMARY_CHARS]
    return WaitingAction(
        approval_id=approval.approval_id,
        tool=approval.tool,
        summary=f"{arguments} ({approval.reason}; asked by {approval.asked_by})",
    )


class UsecaseDesk:
    """Approvals of the session's deployment."""

    def __init__(self, session: ConsoleSession) -> None:
        self.session = session

    async def pending(self, *, agent: str) -> Sequence[WaitingAction]:
        """The agent's approvals still waiting, oldest first."""
        found = await list_approvals(db=self.session.db, agent=agent)
        return [waiting_action(approval) for approval in found]

    async def decide(
        self, *, agent: str, approval_id: str, approve: bool, by: str, reason: str | None
    ) -> None:
        """Approve or refuse one, recorded as decided by ``by``.

        Raises:
            ApprovalError: It is unknown, another agent's, or decided the other way already.
        """
        await decide_approval(
            db=self.session.db,
            client=await self.session.client(),
            approval_id=approval_id,
            approve=approve,
            by=by,
            why=reason,
            agent=agent,
        )


def approvals_desk(session: ConsoleSession) -> UsecaseDesk:
    """The desk the console uses."""
    return UsecaseDesk(session)
