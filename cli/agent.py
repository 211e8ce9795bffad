"""``persyn agent create|list|show|shred|delete``."""

from __future__ import annotations

import getpass
import json
from pathlib import Path
from typing import Annotated

import typer

from cli.common import UserError, friendly_errors, run
from schemas.agents import AgentConfig, AgentCreate, DeliberationMode
from schemas.emotion import AgentEmotion
from schemas.settings import get_settings
from schemas.text import clean_text
from usecases import agents, emotion
from usecases.deletion import delete_agent
from usecases.shred import shred_agent

app = typer.Typer(help="Create and inspect agents.", no_args_is_help=True)


def _persona(value: str) -> str:
    """A persona given as a file path (read as UTF-8) or as the text itself."""
    path = Path(value)
    if len(value) < 4096 and "\n" not in value and path.is_file():
        try:
            return path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            raise UserError(
                f"persona file {value} is not valid UTF-8: re-save it as UTF-8"
            ) from None
    return value


@app.command()
@friendly_errors
def create(
    handle: Annotated[str, typer.Argument(help="Short unique key, e.g. 'ada'.")],
    name: Annotated[str, typer.Option("--name", help="The agent's name.")],
    persona: Annotated[
        str, typer.Option("--persona", help="Seed persona: a file path or the text.")
    ],
    timezone: Annotated[str, typer.Option(help="IANA time zone for the agent's clock.")] = "UTC",
    idle_minutes: Annotated[
        float, typer.Option(help="Minutes of silence before a conversation closes.")
    ] = 30.0,
    deliberation: Annotated[
        DeliberationMode, typer.Option(help="When self-critique lands: inline, deferred or off.")
    ] = DeliberationMode.DEFERRED,
) -> None:
    """Create an agent and start its inbox workflow."""
    spec = AgentCreate(
        handle=handle,
        name=name,
        persona=_persona(persona),
        config=AgentConfig(timezone=timezone, idle_minutes=idle_minutes, deliberation=deliberation),
    )
    agent = run(agents.create_agent(settings=get_settings(), spec=spec))
    typer.echo(
        f"created {agent.handle} ({agent.name}); talk with: persyn chat --agent {agent.handle}"
    )


@app.command("list")
@friendly_errors
def list_(as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False) -> None:
    """Every agent."""
    found = run(agents.list_agents(settings=get_settings()))
    if as_json:
        typer.echo(json.dumps([a.model_dump(mode="json") for a in found], indent=2))
        return
    if not found:
        typer.echo("no agents yet: persyn agent create HANDLE --name NAME --persona TEXT")
        return
    for agent in found:
        typer.echo(f"{agent.handle:<24} {agent.name:<24} created {agent.created_at:%Y-%m-%d %H:%M}")


@app.command()
@friendly_errors
def show(
    handle: Annotated[str, typer.Argument(help="The agent's handle.")],
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """One agent's record, with its emotional state now and its recent trajectory."""
    settings = get_settings()
    agent = run(agents.find_agent(settings=settings, handle=handle))
    if agent is None:
        raise UserError(f"there is no agent {handle!r}: see `persyn agent list`")
    feeling = run(emotion.agent_emotion(settings=settings, agent=agent.handle))
    if as_json:
        shown = {**agent.model_dump(mode="json"), "emotion": feeling.model_dump(mode="json")}
        typer.echo(json.dumps(shown, indent=2))
        return
    typer.echo(f"handle:      {agent.handle}\nname:        {agent.name}")
    typer.echo(f"created:     {agent.created_at:%Y-%m-%d %H:%M:%S %Z}")
    typer.echo(f"config:      {agent.config.model_dump_json()}")
    for line in _emotion_lines(feeling):
        typer.echo(line)
    typer.echo(f"persona:\n{agent.persona}")


def _emotion_lines(feeling: AgentEmotion) -> list[str]:
    state = feeling.state
    now = f"feeling:     {state.words()}"
    if state.reading is None:
        return [f"{now} (baseline: no readings yet)"]
    since = f"{now} (decayed from {state.reading.top.value} {state.reading.probability:.2f}"
    lines = [f"{since} at {state.reading.at:%Y-%m-%d %H:%M %Z})"]
    lines += [
        f"  {r.at:%Y-%m-%d %H:%M}  {r.top.value:<10} {r.probability:.2f}  {r.channel_key}"
        for r in feeling.trajectory
    ]
    return lines


@app.command()
@friendly_errors
def shred(
    handle: Annotated[str, typer.Argument(help="The agent's handle.")],
    yes: Annotated[bool, typer.Option("--yes", help="Do not ask for confirmation.")] = False,
) -> None:
    """Destroy the agent's payload keys, sandbox environment and skill library.

    What Temporal's histories hold for it becomes unreadable; its sandbox container and volume
    and the skills it wrote are removed. For an agent being deleted or made to forget
    everything. Its running workflows cannot be replayed afterwards; its next payloads get a
    fresh key. When it returns, no process opens its payloads any more.
    """
    if not yes and not typer.confirm(
        f"Make every payload Temporal holds for {handle!r} unreadable, for good?"
    ):
        raise UserError("nothing shredded")
    report = run(shred_agent(settings=get_settings(), handle=handle))
    count = report.keys
    typer.echo(
        f"shredded {count} key{'s' if count != 1 else ''} of {handle}: "
        "its payloads in Temporal's histories can no longer be read"
    )
    if report.sandbox_left is None:
        typer.echo("removed its sandbox environment (container and volume)")
    else:
        typer.echo(f"sandbox environment not removed: {report.sandbox_left}")
    if report.skills_removed:
        typer.echo("deleted its skill library")
    if report.media_removed:
        typer.echo("deleted the pictures and recordings kept for it")


def _operator() -> str:
    try:
        return getpass.getuser()
    except (KeyError, OSError):
        return "operator"


@app.command()
@friendly_errors
def delete(
    handle: Annotated[str, typer.Argument(help="The agent's handle.")],
    by: Annotated[
        str | None, typer.Option("--by", help="Who deletes it, for the audit (default: you).")
    ] = None,
    yes: Annotated[bool, typer.Option("--yes", help="Do not ask for confirmation.")] = False,
) -> None:
    """Delete the agent for good: its runs end, its keys are shredded, its rows erased.

    Its schedules go and every running workflow of it is terminated; it is shredded (payload
    keys, sandbox environment, skill library); then every row that belongs to it is deleted:
    dialog, memories, people, channels, prompts, the outbox and the rest. Kept: its usage
    totals per day, channel and model (for billing), and the audit entry of the deletion
    (who, when, rows erased per table).
    """
    actor = clean_text(by, what="--by", max_chars=200) if by is not None else _operator()
    if not yes and not typer.confirm(
        f"Delete {handle!r} with everything it said, heard and remembered, for good?"
    ):
        raise UserError("nothing deleted")
    report = run(delete_agent(settings=get_settings(), handle=handle, actor=actor))
    rows = sum(report.erased.rows.values())
    typer.echo(
        f"deleted {handle}: {report.workflows} running workflow(s) terminated, "
        f"{report.schedules} schedule(s) removed, {report.shred.keys} key(s) shredded, "
        f"{rows} row(s) erased"
    )
    for table, count in sorted(report.erased.rows.items()):
        typer.echo(f"  {table:<24} {count}")
    if report.erased.usage_summed:
        typer.echo(f"kept its usage totals ({report.erased.usage_summed} records summed by day)")
    if report.shred.sandbox_left is not None:
        typer.echo(f"sandbox environment not removed: {report.shred.sandbox_left}")
    typer.echo(f"audit: deleted by {actor}")
