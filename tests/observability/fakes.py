"""Meters for the tests: one that records, one that raises, one that hangs."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from schemas.models import UsageRecord


class RecordingMeter:
    """Keeps every record it is given, and signals each arrival."""

    def __init__(self, name: str = "recorder") -> None:
        self.name = name
        self.records: list[UsageRecord] = []
        self.arrived = asyncio.Event()

    async def record(self, usage: UsageRecord) -> None:
        self.records.append(usage)
        self.arrived.set()

    async def aclose(self) -> None:
        pass

    async def wait_for(
        self,
        count: int,
        *,
        where: Callable[[UsageRecord], bool] = lambda _: True,
        timeout: float = 20.0,
    ) -> None:
        """Wait until ``count`` records (matching ``where``) have arrived."""
        async with asyncio.timeout(timeout):
            while sum(1 for r in self.records if where(r)) < count:
                self.arrived.clear()
                await self.arrived.wait()


class RaisingMeter:
    """A broken adapter: every record raises."""

    name = "raising"

    def __init__(self) -> None:
        self.calls = 0

    async def record(self, usage: UsageRecord) -> None:
        self.calls += 1
        raise RuntimeError("this meter is broken")

    async def aclose(self) -> None:
        raise RuntimeError("and cannot even close")


class HangingMeter:
    """A stuck adapter: every record waits until released."""

    name = "hanging"

    def __init__(self) -> None:
        self.entered = asyncio.Event()
        self.release = asyncio.Event()

    async def record(self, usage: UsageRecord) -> None:
        self.entered.set()
        await self.release.wait()

    async def aclose(self) -> None:
        self.release.set()
