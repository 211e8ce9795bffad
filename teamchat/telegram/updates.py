"""One Telegram update as the agent's inbound event, or the reason it is left out.

Pure: no I/O. The channel is the chat (``telegram:<chat id>``), the speaker the sender's user
ID with their name, so the directory finds the same person on their next message. In a private
chat every message is addressed to the agent; in a group only one that mentions the bot
(``@username``), replies to one of its messages, or names the agent, so the decide step
chooses whether to speak on the rest (docs/deliberation.md).

An edited message becomes a new event that says it is an edit, with an ID of its own (one per
edit), so the agent reads the correction; the original stays in the dialog as it was said.

A photo, a voice note or an audio file is named in ``Incoming.media`` with an ID fixed by the
message, so a re-read update keeps it under the same ID; the poller fetches and keeps it before
the event goes (``teamchat.telegram.media``). Without a caption the event's text says what was
sent ("(a photo)").
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import ValidationError
from telegram import Bot, Message, MessageEntity, Update
from telegram.constants import ChatType

from schemas.events import ChannelRef, InboundEvent, Speaker
from schemas.ids import ulid_from_parts, ulid_time
from schemas.telegram import TELEGRAM_SERVICE

EDITED_PREFIX = "(edited) "
"""How an edited message reads to the agent."""

UNCAPTIONED = {"photo": "(a photo)", "voice": "(a voice note)", "audio": "(a recording)"}
"""The text of a message that is only a photo, a voice note or an audio file."""

_NAME_CHARS = 200


@dataclass(frozen=True)
class BotIdentity:
    """Who the bot is (from ``getMe``) and the words that address the agent in a group."""

    bot_id: int
    username: str
    names: tuple[str, ...] = ()


@dataclass(frozen=True)
class MediaRef:
    """A file a message carries: what it is, how Telegram names it, the ID it is kept under."""

    kind: Literal["image", "audio"]
    file_id: str
    media_id: str
    size: int | None = None


@dataclass(frozen=True)
class Incoming:
    """An update the agent should perceive: the event and where it came from on Telegram."""

    update_id: int
    event: InboundEvent
    chat_id: int
    message_id: int
    media: tuple[MediaRef, ...] = ()


@dataclass(frozen=True)
class Skipped:
    """An update left out, and why (for the log; never sent anywhere)."""

    update_id: int | None
    reason: str


def update_id_of(raw: object) -> int | None:
    """The ``update_id`` of a raw update, if it has a usable one."""
    if isinstance(raw, dict):
        value = raw.get("update_id")
        if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
            return value
    return None


def event_id_for(bot_id: int, message: Message, *, edited: bool) -> str:
    """A ULID fixed by the bot, chat, message (and edit): a re-read update is the same event.

    The time part is when the message was sent (or edited), so events still sort by time.
    """
    when = message.edit_date if edited and message.edit_date is not None else message.date
    key = f"telegram:{bot_id}:{message.chat.id}:{message.message_id}"
    if edited:
        key += f":edit:{int(when.timestamp())}"
    digest = hashlib.sha256(key.encode()).digest()
    return ulid_from_parts(when, int.from_bytes(digest[:10], "big"))


def media_id_for(event_id: str, file_unique_id: str) -> str:
    """A ULID fixed by the event and the file: a re-read update keeps the file once."""
    digest = hashlib.sha256(f"telegram-media:{event_id}:{file_unique_id}".encode()).digest()
    return ulid_from_parts(ulid_time(event_id), int.from_bytes(digest[:10], "big"))


def _media(message: Message, event_id: str) -> tuple[tuple[MediaRef, ...], str | None]:
    """The files ``message`` carries, and what its text is without a caption."""
    if message.photo:
        largest = message.photo[-1]  # Telegram lists a photo's sizes smallest first
        ref = MediaRef(
            kind="image",
            file_id=largest.file_id,
            media_id=media_id_for(event_id, largest.file_unique_id),
            size=largest.file_size,
        )
        return (ref,), UNCAPTIONED["photo"]
    for name, sound in (("voice", message.voice), ("audio", message.audio)):
        if sound is not None:
            ref = MediaRef(
                kind="audio",
                file_id=sound.file_id,
                media_id=media_id_for(event_id, sound.file_unique_id),
                size=sound.file_size,
            )
            return (ref,), UNCAPTIONED[name]
    return (), None


def is_addressed(message: Message, me: BotIdentity) -> bool:
    """Whether a message speaks to the agent: a private chat, a mention, a reply or its name."""
    if message.chat.type == ChatType.PRIVATE:
        return True
    replied = message.reply_to_message
    if replied is not None and replied.from_user is not None and replied.from_user.id == me.bot_id:
        return True
    text = message.text or message.caption or ""
    entities = message.entities or message.caption_entities or ()
    if any(
        entity.type == MessageEntity.TEXT_MENTION and entity.user and entity.user.id == me.bot_id
        for entity in entities
    ):
        return True
    mention = re.compile(rf"(?<!\w)@{re.escape(me.username)}(?!\w)", re.IGNORECASE)
    if me.username and mention.search(text):
        return True
    return any(
        re.search(rf"(?<!\w){re.escape(name)}(?!\w)", text, re.IGNORECASE)
        for name in me.names
        if name.strip()
    )


def _display_name(message: Message) -> str | None:
    user = message.from_user
    if user is None:
        return None
    name = " ".join(part for part in (user.first_name, user.last_name) if part).strip()
    name = name or (user.username or "")
    return name[:_NAME_CHARS] if name.strip() else None


def normalise(raw: dict[str, Any], bot: Bot, me: BotIdentity) -> Incoming | Skipped:
    """Read one raw update (a JSON object from ``getUpdates``); never raises.

    Args:
        raw: The update as Telegram sent it.
        bot: The bot the update is parsed for (the library links objects to it).
        me: Who the bot is.
    """
    update_id = update_id_of(raw)
    try:
        update = Update.de_json(raw, bot)
    except Exception as err:  # any shape Telegram would never send
        return Skipped(update_id, f"unreadable update ({type(err).__name__})")
    edited = update.edited_message is not None and update.message is None
    message = update.message or update.edited_message
    if message is None:
        return Skipped(update_id, "not a message or an edit of one")
    try:
        return _incoming(update_id, message, me, edited=edited)
    except ValidationError as err:
        first = err.errors(include_url=False)[0]
        where = ".".join(str(part) for part in first["loc"])
        return Skipped(update_id, f"refused ({where}: {first['msg']})")
    except (AttributeError, TypeError, ValueError) as err:
        return Skipped(update_id, f"malformed message ({type(err).__name__})")


def _incoming(
    update_id: int | None, message: Message, me: BotIdentity, *, edited: bool
) -> Incoming | Skipped:
    event_id = event_id_for(me.bot_id, message, edited=edited)
    media, uncaptioned = _media(message, event_id)
    text = message.text or message.caption
    if not isinstance(text, str) or not text.strip():
        if uncaptioned is None:
            return Skipped(update_id, "no text (stickers, locations... are not read)")
        text = uncaptioned
    sender = message.from_user
    if sender is None:
        return Skipped(update_id, "no sender (a channel post or an anonymous admin)")
    if sender.id == me.bot_id:
        return Skipped(update_id, "the bot's own message")
    if update_id is None:
        return Skipped(None, "no update_id")
    event = InboundEvent(
        event_id=event_id,
        channel=ChannelRef(service=TELEGRAM_SERVICE, channel=str(int(message.chat.id))),
        speaker=Speaker(speaker_id=str(int(sender.id)), display_name=_display_name(message)),
        text=EDITED_PREFIX + text if edited else text,
        addressed=is_addressed(message, me),
        sent_at=message.edit_date if edited and message.edit_date else message.date,
    )
    return Incoming(
        update_id=update_id,
        event=event,
        chat_id=int(message.chat.id),
        message_id=int(message.message_id),
        media=media,
    )
