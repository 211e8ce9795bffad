"""Goal tools: the only way goals are authored (spec §4.8). Outcomes become memories."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Literal

from pydantic import BaseModel, Field

from activities.tools.builtin.deps import ToolDeps
from activities.tools.registry import Tool, ToolError, ToolInput, ToolRun
from schemas.autonomy import GoalPublic, GoalStatus
from schemas.ids import InvalidIdError, check_ulid
from schemas.text import InvalidTextError, clean_text
from store.queries.goals import OPEN_STATUSES, add_goal, count_open_goals, list_goals, update_goal

OutcomeMemory = Callable[[ToolRun, GoalPublic, GoalStatus], Awaitable[None]]
"""Remembers a goal's outcome (wired to memory formation when it is available)."""


def _text(value: str, what: str, limit: int = 1000) -> str:
    try:
        return clean_text(value, what=what, max_chars=limit)
    except InvalidTextError as err:
        raise ToolError(str(err)) from None


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
        self, call: ToolRun, goal_id: str, status: GoalStatus | None, note: str | None
    ) -> GoalPublic:
        async with self._deps.db.session() as session:
            changed = await update_goal(
                session,
                agent=call.context.agent,
                goal_id=_goal_id(goal_id),
                status=status,
                note=note,
                at=call.now,
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


class UpdateGoalInput(ToolInput):
    """Input of ``update_goal``."""

    goal_id: str = Field(description="The goal's ID.")
    status: Literal["open", "in_progress", "achieved", "abandoned"] | None = Field(
        default=None, description="The goal's new status."
    )
    note: str | None = Field(default=None, description="Progress made, or the outcome.")


class UpdateGoal(_GoalTool):
    """Update a goal's status or progress note."""

    name = "update_goal"
    description = (
        "Record progress on a goal, or change its status (in_progress, achieved, abandoned). "
        "Say what happened in 'note': outcomes are remembered."
    )
    input_model = UpdateGoalInput
    output_model = GoalPublic

    async def run(self, call: ToolRun, args: UpdateGoalInput) -> GoalPublic:
        """Update it."""
        if args.status is None and args.note is None:
            raise ToolError("give a status, a note, or both")
        note = _text(args.note, "note") if args.note is not None else None
        status = GoalStatus(args.status) if args.status else None
        return await self._change(call, args.goal_id, status, note)


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
