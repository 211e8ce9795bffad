"""``persyn telegram``: the Telegram channel's poller, run in the foreground."""

from __future__ import annotations

import logging
from typing import Annotated

import typer

from cli.common import UserError, friendly_errors, run
from schemas.settings import get_settings

app = typer.Typer(
    help="The Telegram channel: run the poller that hands chats to an agent.",
    no_args_is_help=True,
    add_completion=False,
)


@app.command("run")
@friendly_errors
def run_poller(
    agent: Annotated[
        str | None,
        typer.Option(help="The agent the bot speaks for (default: [telegram] agent)."),
    ] = None,
) -> None:
    """Read the bot's messages and hand them to the agent until Ctrl-C.

    `persyn up` runs the same poller under its supervisor when [telegram] is configured; run
    only one poller per bot (Telegram gives each update to one reader).
    """
    from activities.channels.telegram.bot import TelegramSetupError
    from teamchat.telegram.process import run_until_signalled

    settings = get_settings()
    if agent is not None:
        config = settings.telegram.model_copy(update={"agent": agent})
        settings = settings.model_copy(update={"telegram": config})
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")
    try:
        run(run_until_signalled(settings))
    except TelegramSetupError as err:
        raise UserError(str(err)) from None
