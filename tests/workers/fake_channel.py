"""A channel that exists only in tests: registered beside Telegram, it proves the seam.

``python -m tests.workers.fake_channel`` is its process: it says it reads, waits for SIGTERM and
says it stopped. It counts as set up when the home holds ``fakechat.configured``; nothing in
``workers/`` knows its name.
"""

from __future__ import annotations

import signal
import sys
import threading
from types import FrameType

from schemas.settings import Settings
from workers.channel_processes import ChannelProcess

MARKER = "fakechat.configured"
READING = "fake channel reading"
STOPPED = "fake channel stopped"


def _configured(settings: Settings) -> bool:
    return (settings.home / MARKER).exists()


FAKE = ChannelProcess(
    name="fakechat",
    module="tests.workers.fake_channel",
    configured=_configured,
    address=lambda settings: f"fakechat://{settings.home.name}",
    activity=lambda settings: "reads the fake chat",
    stop_grace_s=3.0,
)


def main() -> None:
    """Read nothing until SIGTERM, saying so."""
    stop = threading.Event()

    def stop_requested(signum: int, frame: FrameType | None) -> None:
        stop.set()

    signal.signal(signal.SIGTERM, stop_requested)
    print(READING, flush=True)
    stop.wait()
    print(STOPPED, flush=True)
    sys.exit(0)


if __name__ == "__main__":
    main()
