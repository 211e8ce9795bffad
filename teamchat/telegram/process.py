"""The poller as a process: settings to bot, Temporal client and store, then poll until stopped.

Run by ``persyn telegram run`` in a terminal, or as ``python -m teamchat.telegram`` by the
stack's supervisor, which restarts it if it dies.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import logging
import signal

from sqlalchemy.exc import SQLAlchemyError
from telegram.error import InvalidToken, TelegramError

from activities.channels.telegram.bot import TelegramSetupError, build_bot, read_token, redact
from schemas.settings import Settings
from teamchat.telegram.poller import BACKOFF_S, TelegramPoller
from teamchat.telegram.updates import BotIdentity
from temporal.client import connect
from usecases.store import open_store
from workers.presence import HomePresence

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
    stop = stop or asyncio.Event()
    config = settings.telegram
    if config.agent is None:
        raise TelegramSetupError(
            "no agent for the Telegram bot: set [telegram] agent in persyn.toml "
            "or PERSYN_TELEGRAM__AGENT"
        )
    token = read_token(config)
    client = await connect(settings, ready_within=CONNECT_WITHIN_S)
    bot = build_bot(config, token)
    async with open_store(settings, pool_size=2) as db:
        poller = TelegramPoller(
            bot=bot,
            token=token,
            client=client,
            db=db,
            agent=config.agent,
            settings=settings,
            presence=HomePresence(settings),
        )
        try:
            me = await _identify(poller, token=token, base_url=config.base_url, stop=stop)
            if me is not None:
                log.info("polling Telegram as @%s for agent %s", me.username, config.agent)
                await poller.run(stop)
        finally:
            await bot.shutdown()
    del client
    gc.collect()


async def _identify(
    poller: TelegramPoller, *, token: str, base_url: str, stop: asyncio.Event
) -> BotIdentity | None:
    """Who the bot is, waiting while Telegram or the database is not there yet (``None``: stop).

    The stack starts the poller beside the worker, which may still be migrating, and a laptop
    may be offline: both pass. A refused token or a missing agent do not, and are said at once.
    """
    failures = 0
    while True:
        try:
            return await poller.identify()
        except LookupError as err:
            raise TelegramSetupError(str(err)) from None
        except InvalidToken:
            raise TelegramSetupError(
                f"the Telegram bot API at {base_url} refused the bot token: check [telegram] "
                "token_file"
            ) from None
        except (TelegramError, SQLAlchemyError, OSError) as err:
            wait = BACKOFF_S[min(failures, len(BACKOFF_S) - 1)]
            failures += 1
            log.warning(
                "cannot start polling yet (%s); trying again in %g s", redact(str(err), token), wait
            )
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), wait)
            if stop.is_set():
                return None


async def run_until_signalled(settings: Settings) -> None:
    """:func:`run_poller` until SIGTERM or SIGINT (the supervisor's stop, or Ctrl-C)."""
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    await run_poller(settings, stop=stop)
