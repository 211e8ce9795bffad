"""Heartbeat while a long step runs, so a worker that dies mid-step is noticed in seconds.

Model calls, extraction and delegated sandbox commands run for seconds to minutes. Their
activities have a short heartbeat timeout (``contract.policies``); a beat every
``HEARTBEAT_EVERY_S`` keeps a live step alive, and a dead worker's step is retried elsewhere
once the beats stop.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator

from temporalio import activity

from contract.policies import HEARTBEAT_EVERY_S


@contextlib.asynccontextmanager
async def heartbeating(every_s: float = HEARTBEAT_EVERY_S) -> AsyncIterator[None]:
    """Heartbeat every ``every_s`` seconds while the body runs.

    Outside an activity (benchmarks, direct calls in tests) there is nobody to heartbeat to,
    and it does nothing.
    """
    if not activity.in_activity():
        yield
        return

    async def beat() -> None:
        while True:
            activity.heartbeat()
            await asyncio.sleep(every_s)

    beating = asyncio.create_task(beat())
    try:
        yield
    finally:
        beating.cancel()
