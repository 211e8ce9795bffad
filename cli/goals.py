"""``persyn goals list|add|set|requests|approve|refuse``: an agent's goals, as the operator.

What a goal is (its title, description, progress signal and kind) the operator sets; how it is
going (its state and steps) is the agent's own. The agent asks for a change to what a goal is
through a request, which the operator approves (applying it) or refuses.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Annotated

import typer

from cli.common import UserError, excerpt, friendly_errors, run
from cli.contacts import AgentOpt, JsonOpt
from schemas.autonomy import GoalPublic, GoalRequest
from schemas.settings import get_settings
from usecases import goals

app = typer.Typer(
    help="An agent's goals: list and set them as the operator, and decide the changes the agent "
    "asks for.",
    no_args_is_help=True,
)
GoalArg = Annotated[str, typer.Argument(help="The goal's ID (`persyn goals list` shows them).")]
RequestArg = Annotated[
    str, typer.Argument(help="The request's ID (`persyn goals requests` shows them).")
]
AllOpt = Annotated[bool, typer.Option("--all", help="Every status, not only the standing ones.")]
TitleOpt = Annotated[str | None, typer.Option("--title", help="Its name, short.")]
KindOpt = Annotated[
    str | None, typer.Option("--kind", help="goal (it is reached) or interest (it has no end).")
]
SignalOpt = Annotated[str | None, typer.Option("--signal", help="How progress on it shows.")]
EXCERPT = 80
"""How much of a goal's title (or description), or of a request's value, a listing shows."""


def _excerpt(text: str, limit: int = EXCERPT) -> str:
    return excerpt(text, limit)


def _line(goal: GoalPublic) -> str:
    next_step = f"  next: {_excerpt(goal.next_step)}" if goal.next_step else ""
    return (
        f"{goal.goal_id}  {goal.kind.value:<8}  {goal.status.value:<11}  "
        f"{_excerpt(goal.title or goal.description)}{next_step}  [set by {goal.set_by}]"
    )


def _request_line(request: GoalRequest) -> str:
    reason = f"  ({_excerpt(request.reason)})" if request.reason else ""
    when = request.decided_at or request.created_at
    return (
        f'{request.request_id}  {request.goal_id}  {request.field}: "{_excerpt(request.value)}"'
        f"{reason}  [{request.status.value}, {when.astimezone(UTC):%Y-%m-%d}]"
    )


def _dump(rows: list[GoalPublic] | list[GoalRequest]) -> str:
    return json.dumps([row.model_dump(mode="json") for row in rows], indent=2)


@app.command("list")
@friendly_errors
def list_(agent: AgentOpt, all_: AllOpt = False, as_json: JsonOpt = False) -> None:
    """The agent's open goals (every one with --all), oldest first; stalled ones say since when."""
    settings = get_settings()
    found = run(goals.list_goals(settings=settings, agent=agent, every_status=all_))
    if as_json:
        typer.echo(_dump(found))
        return
    if not found:
        typer.echo("no goals")
    now = datetime.now(UTC)
    for goal in found:
        typer.echo(_line(goal))
        since = goals.stalled_since(goal, stall_days=settings.autonomy.goal_stall_days, now=now)
        if since is not None:
            typer.echo(f"  stalled: no move since {since.astimezone(UTC):%Y-%m-%d}")


@app.command()
@friendly_errors
def add(
    agent: AgentOpt,
    description: Annotated[str, typer.Argument(help="What the goal is, in a sentence or two.")],
    title: TitleOpt = None,
    kind: Annotated[
        str, typer.Option("--kind", help="goal (it is reached) or interest (it has no end).")
    ] = "goal",
    signal: SignalOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Add an open goal as the operator; the agent pursues it but cannot change what it is."""
    goal = run(
        goals.add_goal(
            settings=get_settings(),
            agent=agent,
            description=description,
            title=title,
            kind=kind,
            progress_signal=signal,
        )
    )
    typer.echo(goal.model_dump_json(indent=2) if as_json else f"added {goal.goal_id}")


@app.command("set")
@friendly_errors
def set_(
    agent: AgentOpt,
    goal_id: GoalArg,
    title: TitleOpt = None,
    description: Annotated[
        str | None, typer.Option("--description", help="What the goal is.")
    ] = None,
    kind: KindOpt = None,
    signal: SignalOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Change what a goal is: its title, description, kind or progress signal."""
    if title is None and description is None and kind is None and signal is None:
        raise UserError("nothing to change: give --title, --description, --kind or --signal")
    changes = goals.Changes(title=title, description=description, kind=kind, progress_signal=signal)
    goal = run(
        goals.set_goal(settings=get_settings(), agent=agent, goal_id=goal_id, changes=changes)
    )
    typer.echo(goal.model_dump_json(indent=2) if as_json else _line(goal))


@app.command()
@friendly_errors
def requests(agent: AgentOpt, all_: AllOpt = False, as_json: JsonOpt = False) -> None:
    """The changes the agent asked for and awaiting a decision (every one with --all)."""
    found = run(goals.list_requests(settings=get_settings(), agent=agent, every_status=all_))
    if as_json:
        typer.echo(_dump(found))
        return
    if not found:
        typer.echo("no requests")
    for request in found:
        typer.echo(_request_line(request))


@app.command()
@friendly_errors
def approve(agent: AgentOpt, request_id: RequestArg) -> None:
    """Approve a request: the goal takes the value the agent asked for."""
    done = run(
        goals.decide_request(
            settings=get_settings(), agent=agent, request_id=request_id, approve=True
        )
    )
    field = done.request.field
    now = str(getattr(done.goal, field))  # kind is a StrEnum: its value
    typer.echo(f'approved {done.request.request_id}: {field} is now "{_excerpt(now)}"')


@app.command()
@friendly_errors
def refuse(agent: AgentOpt, request_id: RequestArg) -> None:
    """Refuse a request: the goal stays as it was."""
    done = run(
        goals.decide_request(
            settings=get_settings(), agent=agent, request_id=request_id, approve=False
        )
    )
    typer.echo(f"refused {done.request.request_id}: the goal stays as it was")
