"""Settings of the Telegram channel: which bot, for which agent, reached where.

Kept here (not in the adapter) so the worker, the poller process and the supervisor read one
description. The token is a secret: give it in a file (``token_file``) or the environment
(``PERSYN_TELEGRAM__TOKEN``); it is never printed, logged or put in workflow history.
"""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, SecretStr

from schemas.ids import HANDLE_PATTERN

TELEGRAM_SERVICE = "telegram"
"""``ChannelRef.service`` of every Telegram chat; ``channel`` is the chat's ID."""

TELEGRAM_API = "https://api.telegram.org/bot"
"""Telegram's Bot API; the token and method follow it (``{base_url}{token}/sendMessage``)."""


class TelegramSettings(BaseModel):
    """The Telegram channel (``PERSYN_TELEGRAM__*``, ``[telegram]`` in persyn.toml)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    agent: str | None = Field(
        default=None,
        pattern=HANDLE_PATTERN,
        description="The agent the bot speaks for: every message the bot reads goes to it.",
    )
    token: SecretStr | None = Field(
        default=None, description="The bot's token (prefer token_file; never logged)."
    )
    token_file: Path | None = Field(
        default=None, description="A file holding the bot's token, e.g. mode 0600."
    )
    base_url: str = Field(
        default=TELEGRAM_API,
        description="The Bot API up to the token: a local Bot API server or a test double.",
    )
    poll_timeout_seconds: int = Field(
        default=25,
        ge=0,
        le=50,
        description="How long one getUpdates long poll waits for a message (Telegram's limit is "
        "50 s).",
    )
    names: list[str] = Field(
        default_factory=list,
        description="Words that address the agent in a group besides its name and @username.",
    )

    @property
    def configured(self) -> bool:
        """Whether a bot is set up: an agent and a token (in a file or the environment)."""
        return self.agent is not None and (self.token is not None or self.token_file is not None)
