"""``python -m tests.workers.supervise_with_fake_channel``: the supervisor, one channel more.

It registers :data:`tests.workers.fake_channel.FAKE` the way a new channel's one line in
``workers/channel_processes.py`` would, then runs the unchanged supervisor on the children it
chooses.
Only the worker is stood in for by a sleeping process: it needs Temporal, and it is not what
the test is about.
"""

from __future__ import annotations

import logging
import sys

from schemas.settings import get_settings
from tests.workers.fake_channel import FAKE
from workers import channel_processes
from workers.process import WORKER
from workers.supervisor import Supervisor, children

STAND_IN = (
    "import signal, sys, time; signal.signal(signal.SIGTERM, lambda *_: sys.exit(0)); "
    "time.sleep(600)"
)


def main() -> None:
    """Supervise until SIGTERM, as ``python -m workers.supervisor`` does."""
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    channel_processes.REGISTRY = (*channel_processes.REGISTRY, FAKE)
    settings = get_settings()
    kids = children(settings)
    for kid in kids:
        if kid.name == WORKER:
            kid.launch = lambda: [sys.executable, "-c", STAND_IN]
    Supervisor(settings, kids).run()


if __name__ == "__main__":
    main()
