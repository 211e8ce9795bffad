"""``persyn heartbeat status|delete|restore|trigger``: the agent's idle cognition.

Deleting the heartbeat puts the agent to sleep: no heartbeats and no reminders fire until an
operator restores it; an inbound message still wakes it for that exchange. The deletion is
durable (recorded in PostgreSQL), so no restart or redeploy brings the heartbeat back.
"""

from __future__ import annotations

import json
from collections.abc import Coroutine
from typing import Annotated, Any, TypeVar

import typer
from temporalio.client import Client

from activities.scheduling.heartbeats import HeartbeatError
from cli.common import UserError, friendly_errors, run
from schemas.autonomy import HeartbeatState, HeartbeatStatus
from schemas.settings import Settings, get_settings
from usecases import heartbeats
from usecases.heartbeats import bootstrap_heartbeat
from usecases.store import open_store

app = typer.Typer(
    help="Inspect, delete, restore or trigger an agent's heartbeat.", no_args_is_help=True
)
AgentOpt = Annotated[str, typer.Option("--agent", "-a", help="The agent's handle.")]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print JSON.")]
T = TypeVar("T")


async def bootstrap(client: Client, settings: Settings, handle: str) -> bool:
    """Start a new agent's heartbeat, once ever; returns whether it started now.

    Kept for existing callers; the use case is ``usecases.heartbeats.bootstrap_heartbeat``.
    """
    async with open_store(settings) as db:
        return await bootstrap_heartbeat(db=db, client=client, settings=settings, handle=handle)


def _acting(call: Coroutine[Any, Any, T]) -> T:
    """Run an operator action; a refusal from the heartbeat is the user's to fix."""
    try:
        return run(call)
    except HeartbeatError as err:
        raise UserError(str(err)) from None


def render(handle: str, status: HeartbeatStatus) -> str:
    """A status as the terminal shows it."""
    record = status.record
    if record is None:
        return (
            f"{handle} has no heartbeat yet: `persyn heartbeat restore --agent {handle}` starts one"
        )
    if record.state is HeartbeatState.DELETED:
        when = f"{record.deleted_at:%Y-%m-%d %H:%M} UTC" if record.deleted_at else "earlier"
        asleep = (
            f"{handle} is asleep: its heartbeat was deleted {when}. It wakes only for inbound "
            f"messages; `persyn heartbeat restore --agent {handle}` restores it."
        )
        if status.held_reminders:
            asleep += (
                f"\n{status.held_reminders} reminder(s) came due while it slept; they are "
                "delivered when it is restored."
            )
        return asleep
    lines = [f"{handle}'s heartbeat is active: every {record.interval_minutes:g} minutes"]
    if status.next_fire_at:
        lines.append(f"next beat:   {status.next_fire_at:%Y-%m-%d %H:%M:%S} UTC")
    elif not status.scheduled:
        lines.append("no schedule yet: the next worker start (or `restore`) recreates it")
    if status.recent_fires:
        lines.append("recent beats: " + ", ".join(f"{t:%m-%d %H:%M}" for t in status.recent_fires))
    return "\n".join(lines)


def _show(handle: str, status: HeartbeatStatus, as_json: bool) -> None:
    if as_json:
        typer.echo(json.dumps(status.model_dump(mode="json"), indent=2))
    else:
        typer.echo(render(handle, status))


@app.command()
@friendly_errors
def status(agent: AgentOpt, as_json: JsonOpt = False) -> None:
    """Whether the heartbeat is active, and when it beats next."""
    _show(
        agent, _acting(heartbeats.heartbeat_status(settings=get_settings(), handle=agent)), as_json
    )


@app.command()
@friendly_errors
def delete(agent: AgentOpt, as_json: JsonOpt = False) -> None:
    """Delete the heartbeat: the agent sleeps until restored (durable across restarts)."""
    result = _acting(heartbeats.delete_heartbeat(settings=get_settings(), handle=agent))
    _show(agent, result, as_json)


@app.command()
@friendly_errors
def restore(agent: AgentOpt, as_json: JsonOpt = False) -> None:
    """Restore a deleted heartbeat: the agent's idle cognition resumes."""
    result = _acting(heartbeats.restore_heartbeat(settings=get_settings(), handle=agent))
    _show(agent, result, as_json)


@app.command()
@friendly_errors
def trigger(agent: AgentOpt) -> None:
    """Beat once now, outside the schedule."""
    _acting(heartbeats.trigger_heartbeat(settings=get_settings(), handle=agent))
    typer.echo(f"{agent}'s heartbeat fired; see `persyn heartbeat status --agent {agent}`")
