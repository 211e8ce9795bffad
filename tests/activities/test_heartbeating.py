"""A long step heartbeats while it runs, stops when it ends, and is inert outside an activity."""

from __future__ import annotations

import asyncio

from temporalio.testing import ActivityEnvironment

from activities.heartbeating import heartbeating

EVERY_S = 0.01


async def test_beats_while_the_body_runs_and_stops_after() -> None:
    beats: list[object] = []
    three = asyncio.Event()

    def on_heartbeat(*details: object) -> None:
        beats.append(details)
        if len(beats) >= 3:
            three.set()

    async def step() -> int:
        async with heartbeating(every_s=EVERY_S):
            await asyncio.wait_for(three.wait(), timeout=30)
        return len(beats)

    environment = ActivityEnvironment()
    environment.on_heartbeat = on_heartbeat
    at_exit = await environment.run(step)
    assert at_exit >= 3
    await asyncio.sleep(EVERY_S * 10)  # a beat left running would add more meanwhile
    assert len(beats) == at_exit


async def test_outside_an_activity_it_does_nothing() -> None:
    async with heartbeating(every_s=EVERY_S):
        await asyncio.sleep(EVERY_S * 3)  # activity.heartbeat() here would raise
