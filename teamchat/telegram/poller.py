"""The long-polling loop: Telegram updates in, inbound events to the agent's inbox out.

Each update is handled in order, and the offset (the next update to ask for) is saved in
PostgreSQL after it, so a restarted poller starts where the last one stopped: an update handed
over but not yet marked is read again and hands over the same event ID, which the agent
answers once; none is skipped. An update that cannot become an event (a shape Telegram would
not send, no text, refused text such as a NUL or a message past the size limit) is logged by
its update ID and passed over, so it can never stall the chat.

Events go through the submit path every channel uses (:func:`usecases.submission.accept`): it
returns once the agent has accepted the event, before it is answered, so the poller goes on
reading while the agent thinks, and the reply comes back through the outbox and the
``telegram`` adapter like any message the agent sends. An event the agent refuses is logged and
passed over; while no worker serves or Temporal is away, the poller waits and tries the same
update again.
"""

from __future__ import annotations

import asyncio
import logging
import warnings
from datetime import UTC, datetime
from typing import Any

from sqlalchemy.exc import SQLAlchemyError
from telegram import Bot
from telegram.error import TelegramError
from temporalio.client import Client
from temporalio.service import RPCError

from activities.channels.telegram.bot import redact
from schemas.settings import Settings
from store.db import Database
from store.queries.agents import get_agent
from store.queries.telegram import next_offset, remember_inbound, save_offset
from teamchat.telegram.media import with_media
from teamchat.telegram.updates import BotIdentity, Incoming, normalise, update_id_of
from temporal.inbox import SubmitRejectedError
from usecases.errors import UseCaseError
from usecases.presence import WorkerPresence
from usecases.submission import accept

log = logging.getLogger("persyn.telegram")

BACKOFF_S = (1.0, 2.0, 5.0, 10.0, 30.0)
"""Waits after consecutive failures to reach Telegram, Temporal or PostgreSQL."""

ALLOWED_UPDATES = ["message", "edited_message"]
"""What the bot asks Telegram for; everything else stays on Telegram's side."""


class TelegramPoller:
    """Reads one bot's updates and hands them to one agent."""

    def __init__(
        self,
        *,
        bot: Bot,
        token: str,
        client: Client,
        db: Database,
        agent: str,
        settings: Settings,
        presence: WorkerPresence,
    ) -> None:
        self._bot = bot
        self._token = token
        self._client = client
        self._db = db
        self._agent = agent
        self._settings = settings
        self._presence = presence
        self._config = settings.telegram
        self.me: BotIdentity | None = None

    async def identify(self) -> BotIdentity:
        """Ask Telegram who the bot is, and the agent's name that addresses it in a group.

        Raises:
            LookupError: The configured agent does not exist.
            TelegramError: Telegram refused the token or could not be reached.
        """
        await self._bot.initialize()  # asks getMe once; a no-op when already done
        user = self._bot.bot
        async with self._db.session() as session:
            agent = await get_agent(session, handle=self._agent)
        if agent is None:
            raise LookupError(
                f"no agent {self._agent!r}: create it with `persyn agent create` "
                "or set [telegram] agent"
            )
        names = (agent.name, *self._config.names)
        self.me = BotIdentity(bot_id=user.id, username=user.username or "", names=names)
        return self.me

    async def poll_once(self) -> int:
        """One long poll and the updates it brought; returns how many became events."""
        me = self.me or await self.identify()
        async with self._db.session() as session:
            offset = await next_offset(session, bot_id=me.bot_id)
        updates = await self._get_updates(offset)
        handed = 0
        for raw in sorted(updates, key=lambda item: update_id_of(item) or 0):
            result = normalise(raw, self._bot, me) if isinstance(raw, dict) else None
            if isinstance(result, Incoming):
                handed += await self._hand_over(result)
            else:
                reason = "not a JSON object" if result is None else result.reason
                log.warning("passed over Telegram update %s: %s", update_id_of(raw), reason)
            update_id = update_id_of(raw)
            if update_id is not None:
                async with self._db.session() as session:
                    await save_offset(
                        session, bot_id=me.bot_id, offset=update_id + 1, at=datetime.now(UTC)
                    )
                    await session.commit()
        return handed

    async def _get_updates(self, offset: int | None) -> list[Any]:
        args: dict[str, Any] = {
            "timeout": self._config.poll_timeout_seconds,
            "allowed_updates": ALLOWED_UPDATES,
        }
        if offset is not None:
            args["offset"] = offset
        with warnings.catch_warnings():
            # The library would rather we used get_updates, which parses every update at once:
            # one update it cannot parse would then fail the whole batch, every time.
            warnings.simplefilter("ignore")
            result = await self._bot.do_api_request(
                "getUpdates",
                api_kwargs=args,
                read_timeout=float(self._config.poll_timeout_seconds) + 10.0,
            )
        if not isinstance(result, list):
            log.warning("getUpdates answered %s, not a list: ignored", type(result).__name__)
            return []
        return result

    async def _hand_over(self, incoming: Incoming) -> bool:
        """Give the agent the event; whether it took it (a refusal is logged, not raised)."""
        # Its photo or voice note kept first; a file Telegram will not hand over raises, so
        # the offset is not saved and the update is read again.
        event = await with_media(self._bot, self._settings, self._agent, incoming)
        async with self._db.session() as session:
            # Before the event: the reply's delivery looks up the message it answers here.
            await remember_inbound(
                session,
                event_id=event.event_id,
                agent=self._agent,
                chat_id=incoming.chat_id,
                message_id=incoming.message_id,
                at=datetime.now(UTC),
            )
            await session.commit()
        try:
            await accept(
                client=self._client,
                settings=self._settings,
                presence=self._presence,
                handle=self._agent,
                event=event,
            )
        except SubmitRejectedError as err:
            # Sending it again cannot change the answer: pass over it, keep the chat going.
            log.warning("the agent refused Telegram update %d: %s", incoming.update_id, err)
            return False
        log.info(
            "update %d: event %s on %s (%s)",
            incoming.update_id,
            event.event_id,
            event.channel.key,
            "addressed" if event.addressed else "overheard",
        )
        return True

    async def run(self, stop: asyncio.Event | None = None) -> None:
        """Poll until ``stop`` is set; trouble reaching a dependency waits and tries again."""
        stop = stop or asyncio.Event()
        failures = 0
        while not stop.is_set():
            try:
                await _until_stopped(self.poll_once(), stop)
                failures = 0
            except (TelegramError, RPCError, UseCaseError, SQLAlchemyError, OSError) as err:
                wait = BACKOFF_S[min(failures, len(BACKOFF_S) - 1)]
                failures += 1
                log.warning(
                    "Telegram poll failed (%s); trying again in %g s",
                    redact(str(err), self._token),
                    wait,
                )
                await _until_stopped(asyncio.sleep(wait), stop)


async def _until_stopped(step: Any, stop: asyncio.Event) -> None:
    """Run ``step`` unless ``stop`` is set first (then it is cancelled)."""
    task = asyncio.ensure_future(step)
    stopper = asyncio.ensure_future(stop.wait())
    try:
        await asyncio.wait({task, stopper}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        stopper.cancel()
    if task.done():
        task.result()
        return
    task.cancel()
    await asyncio.gather(task, return_exceptions=True)
