"""What a failed Bot API call means for delivery: wait and retry, or give up and say why."""

from __future__ import annotations

import datetime as dt
import warnings

from telegram.error import (
    BadRequest,
    ChatMigrated,
    Forbidden,
    InvalidToken,
    RetryAfter,
    TelegramError,
)

from activities.channels.adapters.base import DeliveryError
from activities.channels.telegram.bot import redact


def retry_after_seconds(err: RetryAfter) -> float:
    """The wait Telegram asked for (``parameters.retry_after``), in seconds."""
    with warnings.catch_warnings():
        # The library warns that the attribute's type will change; both types are handled.
        warnings.simplefilter("ignore")
        value = err.retry_after
    if isinstance(value, dt.timedelta):
        return value.total_seconds()
    return float(value)


def delivery_error(err: TelegramError, *, token: str) -> DeliveryError:
    """The :class:`DeliveryError` for a failed call, with a reason that names what to do.

    Flood control (429) and server or network trouble (5xx, timeouts) are retried; a refusal
    about the chat or the request (4xx) is not, since sending the same thing again cannot help.
    """
    said = redact(err.message, token)
    if isinstance(err, RetryAfter):
        wait = retry_after_seconds(err)
        return DeliveryError(
            f"Telegram flood control: retry after {wait:g} s", retryable=True, retry_after=wait
        )
    if isinstance(err, InvalidToken):
        return DeliveryError(
            "Telegram refused the bot token: check [telegram] token_file", retryable=False
        )
    if isinstance(err, Forbidden):
        return DeliveryError(
            f"Telegram refused to deliver ({said}): the bot was blocked or removed from the chat",
            retryable=False,
        )
    if isinstance(err, ChatMigrated):
        return DeliveryError(
            f"the group became supergroup {err.new_chat_id}: messages to it go to that chat now",
            retryable=False,
        )
    if isinstance(err, BadRequest):
        return DeliveryError(f"Telegram refused the message: {said}", retryable=False)
    return DeliveryError(f"Telegram did not take the message: {said}", retryable=True)
