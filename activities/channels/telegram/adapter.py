"""The ``telegram`` adapter: an outbox message becomes one or more Telegram messages.

A reply answers the message it replies to (Telegram's reply thread) when that message came
from Telegram; a message the agent sends on its own stands alone. A message longer than
Telegram's limit goes in parts, and each part Telegram accepted is recorded, so a retried
delivery sends only the parts still missing. A reply to a message deleted upstream is sent
without the reply link rather than failing.
"""

from __future__ import annotations

import logging
from datetime import UTC, datetime

from telegram import Bot, Message, ReplyParameters
from telegram.error import BadRequest, TelegramError

from activities.channels.adapters.base import (
    ChannelAdapter,
    DeliveryError,
    DeliveryOutcome,
    DeliveryReceipt,
    OutboundMessage,
)
from activities.channels.telegram.bot import TelegramSetupError, build_bot, read_token
from activities.channels.telegram.errors import delivery_error
from activities.channels.telegram.split import split_message
from schemas.settings import Settings
from schemas.telegram import TELEGRAM_SERVICE
from store.db import Database
from store.queries.telegram import record_sent_part, replied_message, sent_parts

log = logging.getLogger(__name__)

_REPLY_GONE = ("message to be replied not found", "replied message not found")
"""Telegram's words when the message a reply points at was deleted."""


class TelegramAdapter:
    """Delivers outbox messages on ``telegram:<chat id>`` through the Bot API."""

    def __init__(self, bot: Bot, db: Database, *, token: str) -> None:
        self._bot = bot
        self._db = db
        self._token = token
        self._ready = False

    @property
    def service(self) -> str:
        """``telegram``."""
        return TELEGRAM_SERVICE

    async def deliver(self, message: OutboundMessage) -> DeliveryReceipt:
        """Send the parts not sent yet; raise :class:`DeliveryError` when one fails."""
        chat_id = _chat_id(message.channel.channel)
        parts = split_message(message.text)
        async with self._db.session() as session:
            done = await sent_parts(session, outbox_id=message.message_id)
            reply_to = None
            if not message.unprompted and message.conversation_id and 0 not in done:
                reply_to = await replied_message(
                    session,
                    reply_turn=message.message_id,
                    conversation_id=message.conversation_id,
                    chat_id=chat_id,
                )
        if not self._ready:
            try:
                await self._bot.initialize()  # asks getMe: a refused token shows here
            except TelegramError as err:
                raise delivery_error(err, token=self._token) from None
            self._ready = True
        for index, text in enumerate(parts):
            if index in done:
                continue
            sent = await self._send(chat_id, text, reply_to if index == 0 else None)
            done[index] = sent.message_id
            async with self._db.session() as session:
                await record_sent_part(
                    session,
                    outbox_id=message.message_id,
                    part=index,
                    chat_id=chat_id,
                    message_id=sent.message_id,
                    at=datetime.now(UTC),
                )
                await session.commit()
        return DeliveryReceipt(
            DeliveryOutcome.DELIVERED,
            external_id=str(done[0]),
            detail=f"{len(parts)} part(s)" if len(parts) > 1 else "",
        )

    async def _send(self, chat_id: int, text: str, reply_to: int | None) -> Message:
        reply = (
            None
            if reply_to is None
            else ReplyParameters(message_id=reply_to, allow_sending_without_reply=True)
        )
        try:
            return await self._bot.send_message(chat_id, text, reply_parameters=reply)
        except BadRequest as err:
            if reply is None or not any(words in err.message.lower() for words in _REPLY_GONE):
                raise delivery_error(err, token=self._token) from None
            # The message it answers was deleted upstream: the answer still goes out.
            log.info("the message replied to in chat %d is gone; sending without the link", chat_id)
            return await self._send(chat_id, text, None)
        except TelegramError as err:
            raise delivery_error(err, token=self._token) from None

    async def aclose(self) -> None:
        """Close the bot's connections."""
        if self._ready:
            await self._bot.shutdown()
            self._ready = False


def _chat_id(channel: str) -> int:
    try:
        return int(channel)
    except ValueError:
        raise DeliveryError(
            f"telegram channel {channel!r} is not a chat ID: it must be the chat's number",
            retryable=False,
        ) from None


def telegram_adapters(settings: Settings, *, db: Database | None = None) -> list[ChannelAdapter]:
    """The Telegram adapter when a bot is configured, else none.

    Args:
        settings: ``[telegram]`` names the bot; the database is the one the settings name
            unless ``db`` is given.
        db: Where the adapter keeps reply links and sent parts.

    A bot whose token cannot be read is logged and left out: the worker still serves every
    other channel, and a message for Telegram fails visibly for want of its adapter.
    """
    if not settings.telegram.configured:
        return []
    try:
        token = read_token(settings.telegram)
    except TelegramSetupError as err:
        log.error("no Telegram delivery: %s", err)
        return []
    store = db if db is not None else Database(settings.database_dsn(), pool_size=2)
    return [TelegramAdapter(build_bot(settings.telegram, token), store, token=token)]
