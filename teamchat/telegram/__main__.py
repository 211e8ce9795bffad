"""``python -m teamchat.telegram``: the Telegram poller, as the supervisor runs it."""

from __future__ import annotations

import asyncio
import logging
import os
import sys

from activities.channels.telegram.bot import TelegramSetupError
from schemas.settings import get_settings
from teamchat.telegram.process import run_until_signalled
from temporal.client import TemporalUnavailableError

log = logging.getLogger("persyn.telegram")


def main() -> None:
    """Entry point."""
    logging.basicConfig(
        level=os.environ.get("PERSYN_LOG_LEVEL", "INFO"),
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    code = 0
    try:
        asyncio.run(run_until_signalled(get_settings()))
    except (TelegramSetupError, TemporalUnavailableError) as err:
        log.error("%s", err)  # settings the operator must fix: one line
        code = 2
    except Exception:
        log.exception("the Telegram poller failed")
        code = 1
    sys.stdout.flush()
    sys.stderr.flush()
    # Avoid the Temporal runtime's known interpreter-exit crash (docs/operations.md).
    os._exit(code)


if __name__ == "__main__":
    main()
