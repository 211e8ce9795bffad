"""``persyn agent create|list|show|shred``."""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path
from typing import Annotated

import typer

from cli import heartbeat
from cli.common import UserError, friendly_errors, run
from schemas.agents import AgentConfig, AgentCreate, AgentPublic, DeliberationMode
from schemas.settings import get_settings
from store.db import Database
from store.queries.agents import create_agent, get_agent, list_agents
from temporal import inbox
from temporal.client import connect, keyring
from temporal.schedules import ensure_maintenance_schedule

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


async def _create(spec: AgentCreate) -> AgentPublic:
    settings = get_settings()
    db = Database(settings.database_dsn())
    try:
        async with db.session() as session:
            agent = await create_agent(session, spec=spec)
    finally:
        await db.aclose()
    client = await connect(settings)
    await inbox.start_agent(client, handle=agent.handle, task_queue=settings.task_queue)
    # Autonomy: the heartbeat is bootstrapped here, once ever; a deletion stays durable.
    await heartbeat.bootstrap(client, settings, agent.handle)
    # Memory formation: the agent's maintenance schedule (culling, retention); idempotent.
    await ensure_maintenance_schedule(
        client,
        handle=agent.handle,
        task_queue=settings.task_queue,
        every=timedelta(minutes=settings.memory.maintenance_minutes),
    )
    return agent


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
    agent = run(_create(spec))
    typer.echo(
        f"created {agent.handle} ({agent.name}); talk with: persyn chat --agent {agent.handle}"
    )


async def _list() -> list[AgentPublic]:
    db = Database(get_settings().database_dsn())
    try:
        async with db.session() as session:
            return await list_agents(session)
    finally:
        await db.aclose()


@app.command("list")
@friendly_errors
def list_(as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False) -> None:
    """Every agent."""
    agents = run(_list())
    if as_json:
        typer.echo(json.dumps([a.model_dump(mode="json") for a in agents], indent=2))
        return
    if not agents:
        typer.echo("no agents yet: persyn agent create HANDLE --name NAME --persona TEXT")
        return
    for agent in agents:
        typer.echo(f"{agent.handle:<24} {agent.name:<24} created {agent.created_at:%Y-%m-%d %H:%M}")


async def _show(handle: str) -> AgentPublic | None:
    db = Database(get_settings().database_dsn())
    try:
        async with db.session() as session:
            return await get_agent(session, handle=handle)
    finally:
        await db.aclose()


@app.command()
@friendly_errors
def show(
    handle: Annotated[str, typer.Argument(help="The agent's handle.")],
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """One agent's record."""
    agent = run(_show(handle))
    if agent is None:
        raise UserError(f"there is no agent {handle!r}: see `persyn agent list`")
    if as_json:
        typer.echo(json.dumps(agent.model_dump(mode="json"), indent=2))
        return
    typer.echo(f"handle:      {agent.handle}\nname:        {agent.name}")
    typer.echo(f"created:     {agent.created_at:%Y-%m-%d %H:%M:%S %Z}")
    typer.echo(f"config:      {agent.config.model_dump_json()}")
    typer.echo(f"persona:\n{agent.persona}")


async def _shred(handle: str) -> int:
    settings = get_settings()
    db = Database(settings.database_dsn())
    try:
        async with db.session() as session:
            agent = await get_agent(session, handle=handle)
    finally:
        await db.aclose()
    if agent is None:
        raise UserError(f"there is no agent {handle!r}: see `persyn agent list`")
    return await keyring(settings).shred(handle)


@app.command()
@friendly_errors
def shred(
    handle: Annotated[str, typer.Argument(help="The agent's handle.")],
    yes: Annotated[bool, typer.Option("--yes", help="Do not ask for confirmation.")] = False,
) -> None:
    """Destroy the agent's payload keys: what Temporal's histories hold for it becomes unreadable.

    For an agent being deleted or made to forget everything. Its running workflows cannot be
    replayed afterwards; its next payloads get a fresh key. Workers forget a cached key within
    PERSYN_CODEC_KEY_CACHE_SECONDS.
    """
    if not yes and not typer.confirm(
        f"Make every payload Temporal holds for {handle!r} unreadable, for good?"
    ):
        raise UserError("nothing shredded")
    count = run(_shred(handle))
    typer.echo(
        f"shredded {count} key{'s' if count != 1 else ''} of {handle}: "
        "its payloads in Temporal's histories can no longer be read"
    )
