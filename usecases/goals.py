"""Goals from the operator's side: list and set them, and decide the changes the agent asks for.

A goal's constitutional fields (title, description, progress signal, kind) say what it is: the
operator sets them, or the agent as it creates the goal; afterwards only the operator changes
them. The agent asks for such a change through an owner request, which the operator approves
(applying it) or refuses. The operational fields (state, next step, last step, what blocks it,
when it last moved) are the agent's own and are only read here.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from pydantic import BaseModel
from sqlmodel.ext.asyncio.session import AsyncSession

from schemas.autonomy import GoalKind, GoalPublic, GoalRequest, GoalRequestStatus, GoalStatus
from schemas.ids import check_ulid
from schemas.settings import Settings
from schemas.text import clean_text
from store.queries import goal_requests as requests_store
from store.queries import goals as store
from store.queries.goals import Constitution
from store.tables.autonomy import GoalRow
from store.tables.columns import utcnow
from usecases.directory import in_agent
from usecases.errors import UseCaseError

OPERATOR = "operator"
"""``set_by`` of the goals the operator adds, and ``decided_by`` of its decisions."""

MAX_TITLE = 120
"""The longest title a goal takes, in characters."""

MAX_DESCRIPTION = 1000
"""The longest description a goal takes (as the agent's create_goal tool allows)."""

MAX_SIGNAL = 500
"""The longest progress signal a goal takes."""

LIST_LIMIT = 1000
"""The most goals one listing shows."""


class GoalError(UseCaseError):
    """A goal cannot be added or set as asked; the message says what to fix."""


@dataclass(frozen=True)
class Changes:
    """Constitutional fields to set, as given (``None``: left as they are)."""

    title: str | None = None
    description: str | None = None
    kind: str | None = None
    progress_signal: str | None = None

    def checked(self) -> dict[str, str]:
        """The fields to set, each validated, by their column names.

        Raises:
            GoalError: nothing to change, or the kind is not goal or interest.
            InvalidTextError: a text is empty, too long or holds a control character.
        """
        found: dict[str, str] = {}
        if self.title is not None:
            found["title"] = clean_text(self.title, what="title", max_chars=MAX_TITLE)
        if self.description is not None:
            found["description"] = clean_text(
                self.description, what="description", max_chars=MAX_DESCRIPTION
            )
        if self.progress_signal is not None:
            found["progress_signal"] = clean_text(
                self.progress_signal, what="progress signal", max_chars=MAX_SIGNAL
            )
        if self.kind is not None:
            found["kind"] = goal_kind(self.kind).value
        if not found:
            raise GoalError("nothing to change: give a title, description, kind or progress signal")
        return found


class Decided(BaseModel):
    """A decided request and its goal as it now is."""

    request: GoalRequest
    goal: GoalPublic


def goal_kind(value: str) -> GoalKind:
    """The kind ``value`` names.

    Raises:
        GoalError: it is neither goal nor interest.
    """
    wanted = value.strip().lower()
    if wanted not in set(GoalKind):
        shown = "".join(c if c.isprintable() else "?" for c in value)[:40]
        raise GoalError(f"a goal's kind is goal or interest, not {shown!r}")
    return GoalKind(wanted)


def stalled_since(goal: GoalPublic, *, stall_days: float, now: datetime) -> datetime | None:
    """When a standing goal last moved, if that is longer ago than ``stall_days``; else ``None``."""
    if goal.status.closed or goal.moved_at is None:
        return None
    return goal.moved_at if now - goal.moved_at > timedelta(days=stall_days) else None


async def _row(session: AsyncSession, agent: str, goal_id: str) -> GoalRow:
    found = check_ulid(goal_id, what="goal")
    row = await session.get(GoalRow, found, with_for_update=True)
    if row is None or row.agent != agent:
        raise GoalError(f"there is no goal {found}: `persyn goals list --all` shows their IDs")
    return row


async def list_goals(*, settings: Settings, agent: str, every_status: bool) -> list[GoalPublic]:
    """The agent's standing goals (``every_status``: closed ones too), oldest first.

    Raises:
        UnknownAgentError: no such agent.
    """
    statuses = list(GoalStatus) if every_status else list(store.OPEN_STATUSES)
    return await in_agent(
        settings,
        agent,
        lambda s: store.list_goals(s, agent=agent, statuses=statuses, limit=LIST_LIMIT),
    )


async def add_goal(
    *,
    settings: Settings,
    agent: str,
    description: str,
    title: str | None = None,
    kind: str = GoalKind.GOAL.value,
    progress_signal: str | None = None,
) -> GoalPublic:
    """Add an open goal as the operator, within ``settings.autonomy.max_open_goals``.

    Raises:
        UnknownAgentError: no such agent.
        GoalError: the agent already holds its most open goals, or the kind is unknown.
        InvalidTextError: a text is empty, too long or holds a control character.
    """
    what = Constitution(
        description=clean_text(description, what="description", max_chars=MAX_DESCRIPTION),
        title=clean_text(title, what="title", max_chars=MAX_TITLE) if title is not None else None,
        kind=goal_kind(kind),
        progress_signal=(
            clean_text(progress_signal, what="progress signal", max_chars=MAX_SIGNAL)
            if progress_signal is not None
            else None
        ),
    )
    limit = settings.autonomy.max_open_goals

    async def act(session: AsyncSession) -> GoalPublic:
        if await store.count_open_goals(session, agent=agent) >= limit:
            raise GoalError(
                f"{agent} already holds {limit} open goals, the most it may "
                "(PERSYN_AUTONOMY__MAX_OPEN_GOALS): raise it, or let the agent close some"
            )
        return await store.add_goal(
            session,
            agent=agent,
            description=what.description,
            created_in=None,
            at=utcnow(),
            constitution=what,
            set_by=OPERATOR,
        )

    return await in_agent(settings, agent, act)


async def set_goal(*, settings: Settings, agent: str, goal_id: str, changes: Changes) -> GoalPublic:
    """Change a goal's constitutional fields as the operator; returns the goal as it now is.

    Raises:
        UnknownAgentError: no such agent.
        InvalidIdError: ``goal_id`` is not a ULID.
        GoalError: no such goal, nothing to change, or the kind is unknown.
        InvalidTextError: a text is empty, too long or holds a control character.
    """
    fields = changes.checked()

    async def act(session: AsyncSession) -> GoalPublic:
        row = await _row(session, agent, goal_id)
        for field, value in fields.items():
            requests_store.apply_field(row, field, value)
        row.updated_at = utcnow()
        session.add(row)
        await session.commit()
        return store.goal_public(row)

    return await in_agent(settings, agent, act)


async def list_requests(*, settings: Settings, agent: str, every_status: bool) -> list[GoalRequest]:
    """The agent's pending requests (``every_status``: decided ones too), oldest first.

    Raises:
        UnknownAgentError: no such agent.
    """
    statuses = list(GoalRequestStatus) if every_status else [GoalRequestStatus.PENDING]
    return await in_agent(
        settings, agent, lambda s: requests_store.list_requests(s, agent=agent, statuses=statuses)
    )


async def decide_request(
    *, settings: Settings, agent: str, request_id: str, approve: bool
) -> Decided:
    """Approve (apply) or refuse a pending request as the operator.

    Raises:
        UnknownAgentError: no such agent.
        InvalidIdError: ``request_id`` is not a ULID.
        GoalRequestError: no such request, it was already decided, or its value cannot apply.
    """
    found = check_ulid(request_id, what="request")

    async def act(session: AsyncSession) -> Decided:
        request, goal = await requests_store.decide(
            session, agent=agent, request_id=found, approve=approve, by=OPERATOR, at=utcnow()
        )
        await session.commit()
        return Decided(request=request, goal=goal)

    return await in_agent(settings, agent, act)
