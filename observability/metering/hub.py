"""Usage records fan out to metering adapters, each isolated and fail-soft (Appendix C).

Emission never blocks the model call that produced the record: records go onto a bounded
in-process queue, and one background task per adapter delivers them with a timeout. A slow,
broken or absent adapter costs only its own records (counted in ``dropped``), never a reply.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from typing import Protocol

from schemas.models import UsageRecord

log = logging.getLogger(__name__)


class UsageMeter(Protocol):
    """A metering adapter: receives every usage record."""

    name: str

    async def record(self, usage: UsageRecord) -> None:
        """Accept one record (may raise; the hub isolates it)."""
        ...

    async def aclose(self) -> None:
        """Flush and release resources."""
        ...


class _Lane:
    """One adapter's queue and delivery task."""

    def __init__(self, meter: UsageMeter, *, capacity: int, timeout: float) -> None:
        self.meter = meter
        self.queue: asyncio.Queue[UsageRecord] = asyncio.Queue(maxsize=capacity)
        self.timeout = timeout
        self.delivered = 0
        self.failed = 0
        self.dropped = 0
        self.task: asyncio.Task[None] | None = None

    def offer(self, usage: UsageRecord) -> None:
        if self.task is None:
            self.task = asyncio.get_running_loop().create_task(self._run())
        try:
            self.queue.put_nowait(usage)
        except asyncio.QueueFull:
            self.dropped += 1

    async def _run(self) -> None:
        while True:
            usage = await self.queue.get()
            try:
                await asyncio.wait_for(self.meter.record(usage), self.timeout)
                self.delivered += 1
            except asyncio.CancelledError:
                raise
            except Exception:
                self.failed += 1
                log.warning("meter %s failed a usage record", self.meter.name, exc_info=True)
            finally:
                self.queue.task_done()

    async def drain(self, timeout: float) -> None:
        if self.task is None:
            return
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self.queue.join(), timeout)


class MeterHub:
    """Delivers usage records to every configured meter without ever blocking the caller."""

    def __init__(
        self, meters: list[UsageMeter], *, capacity: int = 10_000, timeout: float = 5.0
    ) -> None:
        self._lanes = [_Lane(m, capacity=capacity, timeout=timeout) for m in meters]

    @property
    def meters(self) -> list[UsageMeter]:
        """The configured adapters."""
        return [lane.meter for lane in self._lanes]

    def emit(self, usage: UsageRecord) -> None:
        """Queue ``usage`` for every meter; never raises, never waits."""
        for lane in self._lanes:
            try:
                lane.offer(usage)
            except Exception:
                log.warning("meter %s could not queue a record", lane.meter.name, exc_info=True)

    def stats(self) -> dict[str, dict[str, int]]:
        """Per-meter delivered / failed / dropped counts."""
        return {
            lane.meter.name: {
                "delivered": lane.delivered,
                "failed": lane.failed,
                "dropped": lane.dropped,
                "queued": lane.queue.qsize(),
            }
            for lane in self._lanes
        }

    async def flush(self, timeout: float = 5.0) -> None:
        """Wait (up to ``timeout`` per meter) until queued records are delivered."""
        await asyncio.gather(*(lane.drain(timeout) for lane in self._lanes))

    async def aclose(self, timeout: float = 5.0) -> None:
        """Flush, stop the delivery tasks and close the meters."""
        await self.flush(timeout)
        for lane in self._lanes:
            if lane.task is not None:
                lane.task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await lane.task
            with contextlib.suppress(Exception):
                await lane.meter.aclose()
