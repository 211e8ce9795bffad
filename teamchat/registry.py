"""Every inbound channel process the stack knows: one line per channel.

The supervisor, ``persyn up``/``down`` and ``persyn status`` (:mod:`workers.supervisor`,
:mod:`workers.stack`, :mod:`workers.health`) iterate :data:`REGISTRY` and name no channel, so
a new channel is its folder under ``teamchat/`` and one line here (docs/channels.md).
They read it when called, never at import, so a test may put a channel of its own in it.
"""

from __future__ import annotations

from schemas.settings import Settings
from teamchat.channel_process import ChannelProcess
from teamchat.telegram.registration import TELEGRAM

REGISTRY: tuple[ChannelProcess, ...] = (TELEGRAM,)


def configured(settings: Settings) -> list[ChannelProcess]:
    """The registered channel processes ``settings`` set up, in registration order."""
    return [process for process in REGISTRY if process.configured(settings)]
