"""The Telegram poller as the stack runs it: its one entry in :mod:`teamchat.registry`."""

from __future__ import annotations

from schemas.settings import Settings
from teamchat.channel_process import ChannelProcess


def _configured(settings: Settings) -> bool:
    return settings.telegram.configured


def _address(settings: Settings) -> str:
    return settings.telegram.base_url  # up to the token, never the token


def _activity(settings: Settings) -> str:
    return f"polls the bot for agent {settings.telegram.agent}"


TELEGRAM = ChannelProcess(
    name="telegram",
    module="teamchat.telegram",
    configured=_configured,
    address=_address,
    activity=_activity,
)
"""Runs when ``[telegram]`` names a bot (docs/channels-telegram.md)."""
