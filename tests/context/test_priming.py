"""Primed work: taken once, only while fresh, within a bound; what is dropped is cancelled."""

from __future__ import annotations

import asyncio
import contextlib

from activities.context.priming import Primed


async def _value(value: int, started: list[int]) -> int:
    started.append(value)
    return value


async def test_a_primed_task_is_taken_once_under_its_key() -> None:
    started: list[int] = []
    primed: Primed[int] = Primed()
    primed.start("a", lambda: _value(1, started))
    primed.start("a", lambda: _value(2, started))  # a fresh one runs: not started again
    task = primed.take("a")
    assert task is not None and await task == 1
    assert primed.take("a") is None
    assert primed.take("b") is None
    assert started == [1]


async def test_a_stale_task_is_not_used_and_is_cancelled() -> None:
    never = asyncio.Event()
    primed: Primed[bool] = Primed(fresh_seconds=-1.0)  # every task is stale at once
    primed.start("a", lambda: never.wait())
    kept = primed._tasks["a"][1]
    assert primed.take("a") is None
    with contextlib.suppress(asyncio.CancelledError):
        await kept
    assert kept.cancelled()
    assert len(primed) == 0


async def test_past_the_bound_the_oldest_is_cancelled() -> None:
    never = asyncio.Event()
    primed: Primed[bool] = Primed(limit=2)
    primed.start("a", lambda: never.wait())
    oldest = primed._tasks["a"][1]
    for key in ("b", "c"):
        primed.start(key, lambda: never.wait())
    assert len(primed) == 2
    assert primed.take("a") is None
    with contextlib.suppress(asyncio.CancelledError):
        await oldest
    assert oldest.cancelled()
    for key in ("b", "c"):
        task = primed.take(key)
        assert task is not None
        task.cancel()


async def test_a_failed_primed_task_reports_to_its_taker() -> None:
    async def fails() -> int:
        raise RuntimeError("database down")

    primed: Primed[int] = Primed()
    primed.start("a", fails)
    task = primed.take("a")
    assert task is not None
    try:
        await task
    except RuntimeError as err:
        assert "database down" in str(err)
    else:
        raise AssertionError("the failure was lost")
