"""``persyn calls list|end``: the live calls that are on, and ending one by hand.

A call holds its agent's lock while it lasts, and every other channel's message waits for it
(docs/channels.md, "Live voice"). The transport ends a call when the line drops; ``end`` is
for a call that should end sooner.
"""

from __future__ import annotations

import json
from datetime import UTC
from typing import Annotated

import typer

from cli.common import friendly_errors, run
from schemas.settings import get_settings
from schemas.voice import CallDirection, CallState
from usecases import calls

app = typer.Typer(
    help="Live voice calls: list the calls that are on, end one.", no_args_is_help=True
)
CallArg = Annotated[str, typer.Argument(help="The call's ID (`persyn calls list` shows them).")]
AgentFilter = Annotated[
    str | None, typer.Option("--agent", "-a", help="Only this agent's (its handle).")
]
ByOpt = Annotated[str, typer.Option("--by", help="Who ends it (kept as the call's end).")]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print JSON.")]


def _who(state: CallState) -> str:
    call = state.call
    other = call.person_name or call.number or "an unknown caller"
    if call.number and call.person_name:
        other = f"{call.person_name} ({call.number})"
    return f"called {other}" if call.direction is CallDirection.OUTBOUND else f"from {other}"


def _line(on: calls.OnCall) -> str:
    state = on.state
    since = f"since {on.since.astimezone(UTC):%H:%M:%S} UTC, " if on.since else ""
    turns = "1 turn" if state.turns == 1 else f"{state.turns} turns"
    conversation = f", conversation {state.conversation_id}" if state.conversation_id else ""
    return (
        f"{state.call.call_id}  {state.call.agent}  {_who(state)}  [{since}{turns}{conversation}]"
    )


@app.command("list")
@friendly_errors
def list_(agent: AgentFilter = None, as_json: JsonOpt = False) -> None:
    """The calls that are on, oldest first: who, since when, how many turns."""
    found = run(calls.calls_on(get_settings(), agent))
    if as_json:
        typer.echo(
            json.dumps(
                [
                    {**on.state.model_dump(mode="json"), "since": on.since and on.since.isoformat()}
                    for on in found
                ],
                indent=2,
            )
        )
        return
    if not found:
        typer.echo("no call is on")
    for on in found:
        typer.echo(_line(on))


@app.command()
@friendly_errors
def end(call_id: CallArg, by: ByOpt = calls.OPERATOR) -> None:
    """End a call now: its agent takes the messages that waited for it."""
    state = run(calls.end_call(get_settings(), call_id, by))
    typer.echo(
        f"ended call {state.call.call_id} of {state.call.agent} ({state.ended}); "
        f"{state.call.agent} takes the next message now"
    )
