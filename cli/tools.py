"""``persyn tools list``: every tool an agent could be offered, its source, approval and state."""

from __future__ import annotations

import asyncio
import json
from typing import Annotated

import typer

from cli.common import fail, friendly_errors

app = typer.Typer(
    help="List the tools an agent can be offered: source, approval, availability, why not.",
    no_args_is_help=True,
)


@app.command("list")
@friendly_errors
def list_tools(
    agent: Annotated[str, typer.Option("--agent", "-a", help="The agent's handle.")],
    as_json: Annotated[bool, typer.Option("--json", help="One JSON array.")] = False,
) -> None:
    """Each tool: its source, when its calls wait for approval, and why it is not offered.

    Sources: built-in, provider, mcp:<server>, skill, sandbox. Approval, under the current
    [approvals] settings for this agent: always, first contact (a message to someone who never
    talked with the agent), with network (the sandbox has one), or never.
    """
    from pydantic import ValidationError

    from schemas.settings import get_settings
    from usecases.tools import list_tools as collect

    try:
        rows = asyncio.run(collect(settings=get_settings(), agent=agent))
    except ValidationError:
        fail(f"{agent[:40]!r} is not an agent handle (lowercase letters, digits and -)")
    if as_json:
        typer.echo(json.dumps([row.model_dump(mode="json") for row in rows]))
        return
    width = max((len(row.name) for row in rows), default=0)
    source_width = max((len(row.source) for row in rows), default=0)
    approval_width = max((len(f"approval: {row.approval}") for row in rows), default=0)
    for row in rows:
        state = "available" if row.available else f"unavailable: {row.reason}"
        note = f" ({row.reason})" if row.available and row.reason else ""
        approval = f"approval: {row.approval}"
        typer.echo(
            f"{row.name:<{width}}  {row.source:<{source_width}}  "
            f"{approval:<{approval_width}}  {state}{note}"
        )
