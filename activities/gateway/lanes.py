"""Two lanes in front of one model: a reply someone waits for goes before background work.

The local model server answers one call at a time, in the order calls arrive. Without lanes a
reply queues behind memory formation, observation, emotion and guardrail calls: one measured
turn waited 22 s for an emotion reading before its own reply began. Here every call to the
model passes a gate:

- a *foreground* call (a reply, or a judgement the reply waits on) goes at once; if a
  background call holds the model, that call is pre-empted: its stream is closed, the server
  stops it at its next token, and it waits to run again from the start;
- a *background* call goes only while no foreground call waits or runs, one at a time, and
  only once the model has been free of replies for :data:`QUIET_S`: a prompt the server is
  reading cannot be interrupted, and in a quick exchange the next reply comes within a second
  of the last (in the local benchmark, the emotion reading started between two replies held
  the second one up until the server had read the reading's prompt).

Which is which is read from the call itself (:func:`is_foreground`): its task, and whether the
workflow dispatched its activity at background priority.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
from collections.abc import Awaitable, Callable
from typing import TypeVar

from temporalio import activity

from contract.policies import BACKGROUND
from schemas.models import TaskType

log = logging.getLogger(__name__)

T = TypeVar("T")

QUIET_S = 1.5
"""How long after the last reply background work waits before it takes the model."""

REPLY_TASKS = frozenset(
    {
        TaskType.RESPOND,
        TaskType.DECIDE,
        TaskType.CRITIQUE,
        TaskType.REFINE,
        TaskType.CAPTION,
        TaskType.VOICE,  # a caller on the line waits for every word
    }
)
"""Tasks on the path of a reply; the rest (memory, observation, emotion, ...) never are."""


def is_foreground(task: TaskType) -> bool:
    """Whether a call for ``task``, made now, is one a person waits for.

    A critique or revision reconsidering a reply already sent runs at background priority
    (``contract.policies.BACKGROUND``): it waits like the rest of the background work.
    """
    if task not in REPLY_TASKS:
        return False
    try:
        priority = activity.info().priority.priority_key
    except RuntimeError:  # not in an activity (a benchmark, a test): as the task says
        return True
    return priority is None or priority < (BACKGROUND.priority_key or 0)


class PreemptedError(Exception):
    """A background call gave way to a reply; it runs again once the model is free."""


class ModelLanes:
    """The gate in front of one model (one per provider instance, so per worker)."""

    def __init__(self, *, quiet_s: float = QUIET_S) -> None:
        self._changed = asyncio.Condition()
        self._quiet_s = quiet_s
        self._idle_since = -math.inf  # when the last foreground call ended
        self._foreground = 0  # waiting or running
        self._background: asyncio.Task[object] | None = None
        self.preemptions = 0
        """Background calls stopped for a reply since start (for tests and benchmarks)."""

    async def run(self, call: Callable[[], Awaitable[T]], *, foreground: bool) -> T:
        """Run ``call`` in its lane; a background call may be run more than once."""
        if foreground:
            return await self._run_foreground(call)
        while True:
            try:
                return await self._run_background(call)
            except PreemptedError:
                log.info("a background model call gave way to a reply; it runs again after")

    async def _run_foreground(self, call: Callable[[], Awaitable[T]]) -> T:
        async with self._changed:
            self._foreground += 1
            if self._background is not None and not self._background.done():
                self.preemptions += 1
                self._background.cancel("pre-empted by a reply")
        try:
            return await call()
        finally:
            async with self._changed:
                self._foreground -= 1
                self._idle_since = asyncio.get_running_loop().time()
                self._changed.notify_all()

    async def _run_background(self, call: Callable[[], Awaitable[T]]) -> T:
        async with self._changed:
            await self._until_quiet()
            task: asyncio.Task[T] = asyncio.create_task(_awaited(call))
            self._background = task
        try:
            return await asyncio.shield(task)
        except asyncio.CancelledError:
            if task.cancelled() and not _cancelling_us():
                raise PreemptedError from None
            task.cancel()  # our own caller gave up: so does the call
            raise
        finally:
            async with self._changed:
                if self._background is task:
                    self._background = None
                self._changed.notify_all()

    async def _until_quiet(self) -> None:
        """Wait (holding the condition's lock on return) until background work may start."""
        loop = asyncio.get_running_loop()
        while True:
            await self._changed.wait_for(lambda: self._foreground == 0 and self._background is None)
            rest = self._quiet_s - (loop.time() - self._idle_since)
            if rest <= 0:
                return
            with contextlib.suppress(TimeoutError):  # woken early by any change: look again
                await asyncio.wait_for(self._changed.wait(), rest)


async def _awaited(call: Callable[[], Awaitable[T]]) -> T:
    return await call()


def _cancelling_us() -> bool:
    """Whether the current task itself is being cancelled (not only the call it awaited)."""
    current = asyncio.current_task()
    return current is not None and current.cancelling() > 0
