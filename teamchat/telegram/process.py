"""The poller as a process: settings to bot, Temporal client and store, then poll until stopped.

Run by ``persyn telegram run`` in a terminal, or as ``python -m teamchat.telegram`` by the
stack's supervisor, which restarts it if it dies.
"""

from __future__ import annotations

import asyncio
import gc
import logging
import signal

from telegram.error import TelegramError

from activities.channels.telegram.bot import TelegramSetupError, build_bot, read_token, redact
from schemas.settings import Settings
from teamchat.telegram.poller import TelegramPoller
from temporal.client import connect
from usecases.store import open_store

log = logging.getLogger("persyn.telegram")

CONNECT_WITHIN_S = 30.0
"""How long a starting poller waits for Temporal (the stack may still be starting)."""


async def run_poller(settings: Settings, *, stop: asyncio.Event | None = None) -> None:
    """Poll the configured bot for the configured agent until ``stop`` is set.

    Raises:
        TelegramSetupError: ``[telegram]`` names no agent or no readable token, or the agent
            does not exist.
        TemporalUnavailableError: Temporal did not answer.
    """
    config = settings.telegram
    if config.agent is None:
        raise TelegramSetupError(
            "no agent for the Telegram bot: set [telegram] agent in persyn.toml "
            "or PERSYN_TELEGRAM__AGENT"
        )
    token = read_token(config)
    client = await connect(settings, ready_within=CONNECT_WITHIN_S)
    bot = build_bot(config, token)
    try:
        await bot.initialize()  # asks getMe: a wrong token or address shows here
    except TelegramError as err:
        said = redact(err.message, token)
        raise TelegramSetupError(
            f"the Telegram bot API at {config.base_url} refused: {said}"
        ) from None
    async with open_store(settings, pool_size=2) as db, bot:
        poller = TelegramPoller(
            bot=bot,
            token=token,
            client=client,
            db=db,
            agent=config.agent,
            settings=settings,
        )
        try:
            me = await poller.identify()
        except LookupError as err:
            raise TelegramSetupError(str(err)) from None
        log.info("polling Telegram as @%s for agent %s", me.username, config.agent)
        await poller.run(stop)
    del client
    gc.collect()


async def run_until_signalled(settings: Settings) -> None:
    """:func:`run_poller` until SIGTERM or SIGINT (the supervisor's stop, or Ctrl-C)."""
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    await run_poller(settings, stop=stop)
