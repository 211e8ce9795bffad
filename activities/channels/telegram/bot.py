"""The bot client: python-telegram-bot's ``Bot`` pointed at the configured Bot API.

Telegram puts the token in every URL (``{base_url}{token}/sendMessage``), so whatever could
print a URL is kept quiet (httpx's request log, the library's debug log), and every error text
that leaves this package goes through :func:`redact`.
"""

from __future__ import annotations

import logging

from telegram import Bot
from telegram.request import HTTPXRequest

from schemas.telegram import TelegramSettings

SEND_TIMEOUT_S = 20.0
"""Longest wait for one Bot API call other than the long poll."""


class TelegramSetupError(RuntimeError):
    """The Telegram channel is not set up well enough to start; the message says what to fix."""


def read_token(settings: TelegramSettings) -> str:
    """The bot's token, from ``token_file`` or ``token``.

    Raises:
        TelegramSetupError: Neither is given, or the file cannot be read or is empty.
    """
    if settings.token_file is not None:
        try:
            token = settings.token_file.expanduser().read_text(encoding="utf-8").strip()
        except OSError as err:
            raise TelegramSetupError(
                f"cannot read the Telegram token file {settings.token_file}: {err.strerror}"
            ) from None
        if not token:
            raise TelegramSetupError(
                f"the Telegram token file {settings.token_file} is empty: put the bot's token in it"
            )
        return token
    if settings.token is not None and settings.token.get_secret_value().strip():
        return settings.token.get_secret_value().strip()
    raise TelegramSetupError(
        "no Telegram bot token: set [telegram] token_file in persyn.toml or PERSYN_TELEGRAM__TOKEN"
    )


def build_bot(settings: TelegramSettings, token: str) -> Bot:
    """A ``Bot`` for ``token`` on the configured API; ``async with`` it (or ``initialize()``).

    The long poll gets its own connection with a read timeout past the poll's own, so a quiet
    chat is not mistaken for a dead server.
    """
    # Both print URLs, token included: httpx each request at INFO, the library its API and
    # file addresses at DEBUG. Neither says anything at these levels that an error does not.
    logging.getLogger("httpx").setLevel(logging.WARNING)
    logging.getLogger("telegram").setLevel(logging.INFO)
    poll = float(settings.poll_timeout_seconds) + 10.0
    return Bot(
        token,
        base_url=settings.base_url,
        base_file_url=file_url(settings.base_url),
        request=HTTPXRequest(
            connection_pool_size=4,
            read_timeout=SEND_TIMEOUT_S,
            write_timeout=SEND_TIMEOUT_S,
            connect_timeout=SEND_TIMEOUT_S,
        ),
        get_updates_request=HTTPXRequest(read_timeout=poll, connect_timeout=SEND_TIMEOUT_S),
    )


def file_url(base_url: str) -> str:
    """Where the API at ``base_url`` serves files: ``https://api.telegram.org/file/bot``.

    Telegram serves them beside its methods, under ``/file``; so does a server of the same
    shape (a local Bot API), so the one setting names both.
    """
    root = base_url.rstrip("/")
    if root.endswith("/bot"):
        return root.removesuffix("/bot") + "/file/bot"
    return root + "/file/bot"


def redact(text: str, token: str) -> str:
    """``text`` without the token (error texts may quote a URL)."""
    return text.replace(token, "<token>") if token else text
