"""Work a context source starts before its request exists, kept until the request asks.

Admission writes the person's turn before the context is assembled, but some of a source's
reads need only the agent, the channel and the text (recall's channels and the input's
embedding). A source that can start them early keeps the started task here under a key of
those inputs; its ``fetch`` takes the task if it is there and fresh, and does the work itself
otherwise. Nothing is shared between processes or attempts: a miss costs only the time saved.
"""

from __future__ import annotations

import asyncio
import time
from collections import OrderedDict
from collections.abc import Callable, Coroutine, Hashable
from typing import Any, Generic, TypeVar

T = TypeVar("T")

MAX_PRIMED = 32
"""Tasks kept at once; the oldest is cancelled past it (an admission that never assembled)."""

FRESH_SECONDS = 10.0
"""A primed task older than this is not used: what it read may have changed since."""


class Primed(Generic[T]):
    """Started tasks by key, each taken at most once, within a bound and a freshness."""

    def __init__(self, *, limit: int = MAX_PRIMED, fresh_seconds: float = FRESH_SECONDS) -> None:
        self._limit = limit
        self._fresh = fresh_seconds
        self._tasks: OrderedDict[Hashable, tuple[float, asyncio.Task[T]]] = OrderedDict()

    def start(self, key: Hashable, work: Callable[[], Coroutine[Any, Any, T]]) -> None:
        """Start ``work`` under ``key`` unless a fresh task for it is already running."""
        kept = self._tasks.get(key)
        if kept is not None and self._is_fresh(kept[0]):
            return
        self._drop(key)
        self._tasks[key] = (time.monotonic(), asyncio.ensure_future(work()))
        while len(self._tasks) > self._limit:
            self._drop(next(iter(self._tasks)))

    def take(self, key: Hashable) -> asyncio.Task[T] | None:
        """The fresh task started under ``key``, now no longer kept; ``None`` if there is none."""
        kept = self._tasks.pop(key, None)
        if kept is None:
            return None
        started, task = kept
        if not self._is_fresh(started):
            _discard(task)
            return None
        return task

    def __len__(self) -> int:
        return len(self._tasks)

    def _is_fresh(self, started: float) -> bool:
        return time.monotonic() - started <= self._fresh

    def _drop(self, key: Hashable) -> None:
        kept = self._tasks.pop(key, None)
        if kept is not None:
            _discard(kept[1])


def _discard(task: asyncio.Task[Any]) -> None:
    """Cancel a task nobody will await, retrieving its outcome so none is reported as lost."""
    task.cancel()
    task.add_done_callback(lambda done: None if done.cancelled() else done.exception())
