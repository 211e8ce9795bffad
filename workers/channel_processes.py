"""Inbound channel processes: what the stack needs to know to run one, and every one it knows.

An inbound channel reads a service (a chat, a mailbox) in a process of its own beside the
worker and hands what it reads to an agent's inbox; its code is a folder under ``teamchat/``.
The supervisor starts it, ``persyn down`` stops it and ``persyn status`` reports it
(:mod:`workers.supervisor`, :mod:`workers.stack`, :mod:`workers.health`), all from its one
:class:`ChannelProcess` in :data:`REGISTRY`; none of them names a channel. A registration
names its module by string: the channels import ``workers`` (its presence), never the reverse.
Kept free of heavy imports: the supervisor reads it before it starts the worker.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass

from schemas.settings import Settings


@dataclass(frozen=True, kw_only=True)
class ChannelProcess:
    """One inbound channel's process, as the stack runs and reports it."""

    name: str
    """The component's name: its PID file, its log file, its row in ``persyn status``."""
    module: str
    """The module the supervisor runs with ``python -m``."""
    configured: Callable[[Settings], bool]
    """Whether the settings set the channel up; the stack runs the process only then."""
    address: Callable[[Settings], str]
    """Where the process reads from, as ``persyn status`` shows it: never a secret."""
    activity: Callable[[Settings], str]
    """What a running process does, for the status detail (``polls the bot for agent ada``)."""
    stop_grace_s: float = 5.0
    """How long it may take to stop on SIGTERM before it is killed."""

    def command(self) -> list[str]:
        """The command line the supervisor runs: this interpreter, ``-m`` :attr:`module`."""
        return [sys.executable, "-m", self.module]


TELEGRAM = ChannelProcess(
    name="telegram",
    module="teamchat.telegram",
    configured=lambda settings: settings.telegram.configured,
    address=lambda settings: settings.telegram.base_url,  # up to the token, never the token
    activity=lambda settings: f"polls the bot for agent {settings.telegram.agent}",
)
"""The Telegram poller, when ``[telegram]`` names a bot (docs/channels-telegram.md)."""

REGISTRY: tuple[ChannelProcess, ...] = (TELEGRAM,)
"""Every inbound channel process, one entry per channel.

Read when called, never at import, so a test may put a channel of its own in it.
"""


def configured(settings: Settings) -> list[ChannelProcess]:
    """The registered channel processes ``settings`` set up, in registration order."""
    return [process for process in REGISTRY if process.configured(settings)]
