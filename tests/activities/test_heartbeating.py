"""A long step heartbeats while it runs, stops when it ends, and is inert outside an activity."""

from __future__ import annotations

import asyncio

from temporalio.testing import ActivityEnvironment

from activities.heartbeating import heartbeating

EVERY_S = 0.01


def _other_tasks() -> set[asyncio.Task[object]]:
    return {t for t in asyncio.all_tasks() if t is not asyncio.current_task()}


async def test_beats_while_the_body_runs_and_stops_after() -> None:
    beats: list[object] = []
    three = asyncio.Event()

    def on_heartbeat(*details: object) -> None:
        beats.append(details)
        if len(beats) >= 3:
            three.set()

    async def step() -> set[asyncio.Task[object]]:
        before = _other_tasks()
        async with heartbeating(every_s=EVERY_S):
            await asyncio.wait_for(three.wait(), timeout=30)
            beating = _other_tasks() - before
        return beating

    environment = ActivityEnvironment()
    environment.on_heartbeat = on_heartbeat
    beating = await environment.run(step)
    assert len(beats) >= 3 and beating
    # The beat ends with the body: it finishes, cancelled, instead of beating on.
    await asyncio.wait_for(asyncio.gather(*beating, return_exceptions=True), timeout=10)
    assert all(task.cancelled() for task in beating)


async def test_outside_an_activity_it_starts_nothing() -> None:
    before = _other_tasks()
    async with heartbeating(every_s=EVERY_S):
        assert _other_tasks() == before  # activity.heartbeat() here would raise
