"""``persyn console``: open the full-screen console on an agent."""

from __future__ import annotations

import getpass
from typing import Annotated

import typer

from cli.common import friendly_errors, run
from cli.console_app.identity import renamed
from schemas.events import ChannelRef, Speaker
from schemas.settings import Settings, get_settings
from usecases.submission import quiet_sdk_logs

AgentOpt = Annotated[str, typer.Option("--agent", "-a", help="The agent's handle.")]


async def _open(settings: Settings, handle: str, key: str, name: str | None, channel: str) -> None:
    from cli.console_app.app import ConsoleApp
    from cli.console_app.desk import approvals_desk
    from cli.console_app.session import ConsoleSession, agent_name
    from usecases.people import remembered_name

    where = ChannelRef(service="terminal", channel=channel)
    named = await agent_name(settings, handle)
    # A name chosen with /rename in an earlier session is kept; --name overrides it.
    if name is None:
        name = await remembered_name(settings=settings, agent=handle, channel=where, speaker_id=key)
    session = ConsoleSession(
        settings=settings,
        handle=handle,
        agent_name=named,
        speaker=renamed(Speaker(speaker_id=key), name or key),
        channel=where,
    )
    await ConsoleApp(session, desk=approvals_desk(session)).run_async()


@friendly_errors
def console(
    agent: AgentOpt,
    as_: Annotated[
        str | None, typer.Option("--as", help="Your speaker key (default: the OS user).")
    ] = None,
    name: Annotated[
        str | None,
        typer.Option(
            "--name",
            help="The name the agent sees (default: the name you last chose, else the key).",
        ),
    ] = None,
    channel: Annotated[str, typer.Option("--channel", help="Terminal channel name.")] = "console",
) -> None:
    """Open the full-screen operator console on an agent."""
    key = as_ or getpass.getuser()
    if name is not None:
        renamed(Speaker(speaker_id=key), name)  # refused here, in one line, before anything opens
    quiet_sdk_logs()
    run(_open(get_settings(), agent, key, name, channel))
