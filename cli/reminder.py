"""``persyn reminder list|show|cancel``: the operator's view of the reminders agents set.

Agents create and edit their reminders with their own tools; the operator can read them all
and cancel any one.
"""

from __future__ import annotations

import json
from typing import Annotated

import typer

from cli.common import friendly_errors, run
from schemas.autonomy import ReminderPublic
from schemas.settings import get_settings
from usecases import reminders

app = typer.Typer(help="Read and cancel the reminders agents set.", no_args_is_help=True)
JsonOpt = Annotated[bool, typer.Option("--json", help="Print JSON.")]
IdArg = Annotated[str, typer.Argument(help="The reminder's ID (a ULID).")]
AgentOpt = Annotated[
    str | None, typer.Option("--agent", "-a", help="Refuse unless it is this agent's reminder.")
]


def when(reminder: ReminderPublic) -> str:
    """A reminder's timing in words."""
    recurrence = reminder.recurrence
    if recurrence is None:
        return f"once at {reminder.at:%Y-%m-%d %H:%M} UTC" if reminder.at else "once"
    if recurrence.every_minutes:
        return f"every {recurrence.every_minutes:g} min"
    return f"cron '{recurrence.cron}' ({recurrence.timezone})"


def line(reminder: ReminderPublic) -> str:
    """One reminder on one line."""
    upcoming = (
        f"next {reminder.next_fire_at:%Y-%m-%d %H:%M}" if reminder.next_fire_at else "no next"
    )
    objective = reminder.objective.replace("\n", " ")
    if len(objective) > 60:
        objective = objective[:57] + "..."
    return (
        f"{reminder.reminder_id}  {reminder.agent:<16} {reminder.status.value:<9} "
        f"{when(reminder):<28} {upcoming:<22} fired {reminder.fired}  {objective}"
    )


def _print(found: list[ReminderPublic], as_json: bool) -> None:
    if as_json:
        typer.echo(json.dumps([r.model_dump(mode="json") for r in found], indent=2))
    elif not found:
        typer.echo("no reminders")
    else:
        for reminder in found:
            typer.echo(line(reminder))


@app.command("list")
@friendly_errors
def list_(
    agent: Annotated[
        str | None, typer.Option("--agent", "-a", help="Only this agent's reminders.")
    ] = None,
    all_: Annotated[bool, typer.Option("--all", help="Also done and cancelled ones.")] = False,
    as_json: JsonOpt = False,
) -> None:
    """Reminders, oldest first (active ones unless --all)."""
    found = run(
        reminders.list_reminders(settings=get_settings(), agent=agent, include_finished=all_)
    )
    _print(found, as_json)


@app.command()
@friendly_errors
def show(reminder_id: IdArg, agent: AgentOpt = None, as_json: JsonOpt = False) -> None:
    """One reminder in full."""
    reminder = run(
        reminders.show_reminder(settings=get_settings(), reminder_id=reminder_id, agent=agent)
    )
    if as_json:
        typer.echo(json.dumps(reminder.model_dump(mode="json"), indent=2))
        return
    typer.echo(f"reminder:  {reminder.reminder_id} of {reminder.agent} ({reminder.status.value})")
    typer.echo(f"when:      {when(reminder)}")
    if reminder.next_fire_at:
        typer.echo(f"next:      {reminder.next_fire_at:%Y-%m-%d %H:%M:%S} UTC")
    typer.echo(f"fired:     {reminder.fired} times")
    typer.echo(f"objective: {reminder.objective}")


@app.command()
@friendly_errors
def cancel(reminder_id: IdArg, agent: AgentOpt = None) -> None:
    """Cancel a reminder; it will not fire again."""
    reminder = run(
        reminders.cancel_reminder(settings=get_settings(), reminder_id=reminder_id, agent=agent)
    )
    typer.echo(f"cancelled {reminder.reminder_id} of {reminder.agent}")
