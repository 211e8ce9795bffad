"""``persyn pacing show|set``: how fast and how much an agent may talk on its channels.

Pacing applies to the services in ``paced_services`` (by default ``agent``: conversations
between agents). Defaults come from the settings (``PERSYN_PACING__*``); an agent's overrides,
for every channel or for one, are stored with the agent (docs/channels.md).
"""

from __future__ import annotations

import json
from typing import Annotated

import typer

from cli.common import friendly_errors, run
from cli.contacts import AgentOpt, JsonOpt
from schemas.contacts import channel_key
from schemas.delivery import PacingSettings
from schemas.settings import get_settings
from usecases import pacing

app = typer.Typer(
    help="Show or set how much and how fast an agent may talk on its channels.",
    no_args_is_help=True,
)

ChannelOpt = Annotated[
    str | None,
    typer.Option(help="One channel, service:channel (e.g. agent:bo); default: every channel."),
]


def _show(found: PacingSettings, as_json: bool) -> None:
    if as_json:
        typer.echo(json.dumps(found.model_dump(mode="json"), indent=2))
        return
    for name, value in found.model_dump(mode="json").items():
        typer.echo(f"{name:<22} {value}")


@app.command()
@friendly_errors
def show(agent: AgentOpt, channel: ChannelOpt = None, as_json: JsonOpt = False) -> None:
    """The pacing that holds for the agent (on one channel)."""
    key = channel_key(channel).key if channel else None
    _show(run(pacing.show_pacing(settings=get_settings(), agent=agent, channel=key)), as_json)


@app.command("set")
@friendly_errors
def set_(
    agent: AgentOpt,
    values: Annotated[
        list[str], typer.Argument(help="name=value pairs, e.g. budget_tokens=20000 (none clears).")
    ],
    channel: ChannelOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Override pacing settings for the agent (on one channel); prints what then holds."""
    key = channel_key(channel).key if channel else None
    parsed = pacing.parse_values(values)
    found = run(
        pacing.override_pacing(settings=get_settings(), agent=agent, values=parsed, channel=key)
    )
    _show(found, as_json)
