"""The seam for inbound channel processes: what the stack needs to know to run one.

An inbound channel reads a service (a chat, a mailbox) in a process of its own beside the
worker and hands what it reads to an agent's inbox. The supervisor starts it, ``persyn down``
stops it and ``persyn status`` reports it, all from one :class:`ChannelProcess` registered in
:mod:`teamchat.registry`; none of them names a channel. Kept free of heavy imports: the
supervisor reads it before it starts the worker.
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
