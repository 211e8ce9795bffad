"""Goal tools: the agent's goals (spec §4.8), split as phi splits them. Outcomes become memories.

What a goal is (title, description, progress signal, kind) is set as the goal is created, by
the agent or its operator, and afterwards only the operator changes it: ``update_goal`` files
a change to those fields as an owner request (``persyn goals requests``) and leaves the goal as
it is. How a goal is going (state, next step, last step, what blocks it) is the agent's own.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Literal

from pydantic import BaseModel, Field

from activities.tools.builtin.deps import ToolDeps
from activities.tools.registry import Tool, ToolError, ToolInput, ToolRun
from schemas.autonomy import CONSTITUTIONAL, GoalKind, GoalPublic, GoalRequest, GoalStatus
from schemas.ids import InvalidIdError, check_ulid
from schemas.text import InvalidTextError, clean_text
from store.queries.goal_requests import file_request
from store.queries.goals import (
    OPEN_STATUSES,
    Constitution,
    Progress,
    add_goal,
    count_open_goals,
    get_goal,
    list_goals,
    update_goal,
)
from store.tables.autonomy import GoalRow

OutcomeMemory = Callable[[ToolRun, GoalPublic, GoalStatus], Awaitable[None]]
"""Remembers a goal's outcome (wired to memory formation when it is available)."""


def _text(value: str, what: str, limit: int = 1000) -> str:
    try:
        return clean_text(value, what=what, max_chars=limit)
    except InvalidTextError as err:
        raise ToolError(str(err)) from None


def _optional(value: str | None, what: str, *, empty_ok: bool = False) -> str | None:
    if value is None:
        return None
    if empty_ok and not value.strip():
        return ""  # clears the field
    return _text(value, what, 500)


def _goal_id(value: str) -> str:
    try:
        return check_ulid(value, what="goal id")
    except InvalidIdError:
        raise ToolError(f"{value!r} is not a goal ID: use an ID from list_goals") from None


class GoalList(BaseModel):
    """Goals."""

    goals: list[GoalPublic]


class _GoalTool(Tool):
    def __init__(self, deps: ToolDeps, remember: OutcomeMemory | None = None) -> None:
        self._deps = deps
        self._remember = remember

    async def _change(
        self,
        call: ToolRun,
        goal_id: str,
        status: GoalStatus | None,
        note: str | None,
        progress: Progress | None = None,
    ) -> GoalPublic:
        async with self._deps.db.session() as session:
            changed = await update_goal(
                session,
                agent=call.context.agent,
                goal_id=_goal_id(goal_id),
                status=status,
                note=note,
                at=call.now,
                progress=progress,
            )
        if changed is None:
            raise ToolError(f"you have no goal {goal_id}")
        goal, before = changed
        # An outcome (the goal closed) or progress worth a sentence becomes a memory.
        closed_now = goal.status.closed and goal.status != before
        if self._remember is not None and (closed_now or note):
            await self._remember(call, goal, before)
        return goal


class CreateGoalInput(ToolInput):
    """Input of ``create_goal``."""

    description: str = Field(description="What you mean to achieve, in a sentence or two.")
    title: str | None = Field(default=None, description="A short name for it.")
    kind: Literal["goal", "interest"] = Field(
        default="goal", description="A goal is reached; an interest is pursued without an end."
    )
    progress_signal: str | None = Field(default=None, description="How you will see progress.")


class CreateGoal(_GoalTool):
    """Create a goal."""

    name = "create_goal"
    description = (
        "Set yourself a goal. Open goals are shown to you in every conversation and reviewed "
        "at each heartbeat until you mark them achieved, abandoned or retired."
    )
    input_model = CreateGoalInput
    output_model = GoalPublic

    async def run(self, call: ToolRun, args: CreateGoalInput) -> GoalPublic:
        """Create it (bounded: a crowd of goals is no goal at all)."""
        text = _text(args.description, "goal")
        limit = self._deps.settings.autonomy.max_open_goals
        async with self._deps.db.session() as session:
            if await count_open_goals(session, agent=call.context.agent) >= limit:
                raise ToolError(f"you already hold {limit} open goals: retire some first")
            return await add_goal(
                session,
                agent=call.context.agent,
                description=text,
                created_in=call.context.activation_id,
                at=call.now,
                constitution=Constitution(
                    description=text,
                    title=_text(args.title, "title", 120) if args.title else None,
                    kind=GoalKind(args.kind),
                    progress_signal=(
                        _text(args.progress_signal, "progress signal", 500)
                        if args.progress_signal
                        else None
                    ),
                ),
            )


class ListGoalsInput(ToolInput):
    """Input of ``list_goals``."""

    include_closed: bool = Field(default=False, description="Also achieved/abandoned/retired.")


class ListGoals(_GoalTool):
    """List goals."""

    name = "list_goals"
    description = "List your goals with their IDs and status."
    input_model = ListGoalsInput
    output_model = GoalList

    async def run(self, call: ToolRun, args: ListGoalsInput) -> GoalList:
        """List them."""
        statuses = list(GoalStatus) if args.include_closed else list(OPEN_STATUSES)
        async with self._deps.db.session() as session:
            goals = await list_goals(
                session, agent=call.context.agent, statuses=statuses, limit=200
            )
        return GoalList(goals=goals)


_ASKED = "Your operator decides this: the change is sent to them as a request."


class UpdateGoalInput(ToolInput):
    """Input of ``update_goal``: operational fields are set; constitutional ones are asked for."""

    goal_id: str = Field(description="The goal's ID.")
    status: Literal["open", "in_progress", "achieved", "abandoned"] | None = Field(
        default=None, description="The goal's new status."
    )
    note: str | None = Field(default=None, description="Progress made, or the outcome.")
    state: str | None = Field(default=None, description="Where it stands now.")
    next_step: str | None = Field(default=None, description="What you will do next for it.")
    last_step: str | None = Field(default=None, description="What you just did for it.")
    blocked_by: str | None = Field(
        default=None, description="What stands in its way ('' when nothing does any more)."
    )
    title: str | None = Field(default=None, description=f"A new title. {_ASKED}")
    description: str | None = Field(default=None, description=f"A new description. {_ASKED}")
    progress_signal: str | None = Field(default=None, description=f"A new signal. {_ASKED}")
    kind: Literal["goal", "interest"] | None = Field(default=None, description=_ASKED)
    reason: str | None = Field(default=None, description="Why you ask for that change.")


class GoalUpdate(BaseModel):
    """What ``update_goal`` did: the goal as it now is, and the changes sent to the operator."""

    goal: GoalPublic
    requested: list[GoalRequest] = Field(
        default_factory=list,
        description="Changes to what the goal is, waiting for your operator's decision.",
    )


class UpdateGoal(_GoalTool):
    """Update a goal's progress, or ask for a change to what it is."""

    name = "update_goal"
    description = (
        "Record progress on a goal (state, next step, last step, what blocks it) or change its "
        "status (in_progress, achieved, abandoned). Say what happened in 'note': outcomes are "
        "remembered. Its title, description, signal and kind are your operator's: a change "
        "to them is sent as a request."
    )
    input_model = UpdateGoalInput
    output_model = GoalUpdate

    async def run(self, call: ToolRun, args: UpdateGoalInput) -> GoalUpdate:
        """Apply the operational fields; file a request for each constitutional one."""
        asked = {f: getattr(args, f) for f in CONSTITUTIONAL if getattr(args, f) is not None}
        progress = Progress(
            state=_optional(args.state, "state"),
            next_step=_optional(args.next_step, "next step"),
            last_step=_optional(args.last_step, "last step"),
            blocked_by=_optional(args.blocked_by, "blocked by", empty_ok=True),
        )
        moved = any(v is not None for v in (args.status, args.note)) or progress != Progress()
        if not moved and not asked:
            raise ToolError("give a status, a note, a step, or a change to ask for")
        note = _text(args.note, "note") if args.note is not None else None
        status = GoalStatus(args.status) if args.status else None
        goal_id = _goal_id(args.goal_id)
        requested = await self._ask(call, goal_id, asked, args.reason) if asked else []
        if not moved:
            async with self._deps.db.session() as session:
                unchanged = await get_goal(session, agent=call.context.agent, goal_id=goal_id)
            assert unchanged is not None  # _ask found it
            return GoalUpdate(goal=unchanged, requested=requested)
        goal = await self._change(call, goal_id, status, note, progress)
        return GoalUpdate(goal=goal, requested=requested)

    async def _ask(
        self, call: ToolRun, goal_id: str, asked: dict[str, str], reason: str | None
    ) -> list[GoalRequest]:
        why = _text(reason, "reason", 500) if reason else None
        async with self._deps.db.session() as session:
            goal = await session.get(GoalRow, goal_id)
            if goal is None or goal.agent != call.context.agent:
                raise ToolError(f"you have no goal {goal_id}")
            filed = [
                await file_request(
                    session,
                    agent=call.context.agent,
                    goal_id=goal_id,
                    field=field,
                    value=_text(value, field.replace("_", " "), 1000),
                    reason=why,
                    asked_in=call.context.activation_id,
                    at=call.now,
                )
                for field, value in asked.items()
            ]
            await session.commit()
        return filed


class RetireGoalInput(ToolInput):
    """Input of ``retire_goal``."""

    goal_id: str = Field(description="The goal's ID.")
    reason: str = Field(description="Why it no longer stands, or what came of it.")


class RetireGoal(_GoalTool):
    """Retire a goal."""

    name = "retire_goal"
    description = "Retire a goal that no longer matters to you, saying why."
    input_model = RetireGoalInput
    output_model = GoalPublic

    async def run(self, call: ToolRun, args: RetireGoalInput) -> GoalPublic:
        """Retire it."""
        reason = _text(args.reason, "reason")
        return await self._change(call, args.goal_id, GoalStatus.RETIRED, reason)


def goal_tools(deps: ToolDeps, remember: OutcomeMemory | None = None) -> list[Tool]:
    """The goal tools."""
    return [
        CreateGoal(deps, remember),
        ListGoals(deps, remember),
        UpdateGoal(deps, remember),
        RetireGoal(deps, remember),
    ]
