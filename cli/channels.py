"""``persyn channels list|group``: the channels an agent talks on and the memory they share.

Memory is compartmentalised by channel: what was said on one channel is recalled only there,
unless the channels are in one memory group, which then shares it.
"""

from __future__ import annotations

import json
from typing import Annotated

import typer

from cli.common import friendly_errors, run
from cli.contacts import AgentOpt, JsonOpt
from schemas.contacts import channel_key, group_label
from schemas.settings import get_settings
from usecases import channels

app = typer.Typer(
    help="List an agent's channels; group them so they share memory.", no_args_is_help=True
)


@app.command("list")
@friendly_errors
def list_(agent: AgentOpt, as_json: JsonOpt = False) -> None:
    """The agent's channels with their memory groups."""
    found = run(channels.list_channels(settings=get_settings(), agent=agent))
    if as_json:
        typer.echo(json.dumps([c.model_dump(mode="json") for c in found], indent=2))
        return
    if not found:
        typer.echo("no channels")
    for channel in found:
        group = channel.memory_group or "(own memory)"
        typer.echo(f"{channel.key:<40} {group:<24} {channel.last_active:%Y-%m-%d %H:%M}")


@app.command()
@friendly_errors
def group(
    agent: AgentOpt,
    channel: Annotated[str, typer.Argument(help="The channel, service:channel.")],
    name: Annotated[
        str | None, typer.Argument(help="The group to join; omit to leave any group.")
    ] = None,
) -> None:
    """Put a channel in a memory group (channels in one group share memory), or take it out."""
    ref = channel_key(channel)
    label = group_label(name) if name is not None else None
    record = run(
        channels.group_channel(settings=get_settings(), agent=agent, channel=ref, group=label)
    )
    where = f"group {record.memory_group}" if record.memory_group else "no group (own memory)"
    typer.echo(f"{record.key} is in {where}")
