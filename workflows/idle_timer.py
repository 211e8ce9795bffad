"""A conversation's idle timer, kept across its exchanges rather than restarted after each.

Waiting for news with ``workflow.wait_condition(..., timeout=idle)`` starts a timer on every
wait and cancels it when the news comes: two history events per message, and two writes to
the server's timer queue, on a conversation that may take hundreds of messages before it is
ever idle. Kept, a busy conversation starts one timer per idle period: when it fires while news
came meanwhile, it starts again for what is left of the idle time, counted from the last news.
The conversation closes at the same moment either way: ``idle`` after the wait began.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from datetime import datetime, timedelta

from temporalio import workflow

PATCH = "idle-timer-kept"
"""A conversation keeps one idle timer across exchanges; runs recorded before restarted it on
every wait. Asked once at the run's start, then carried in its state (``idle_timer_kept``)."""


class IdleTimer:
    """One running timer, due at the earliest moment the conversation may be idle."""

    def __init__(self, summary: str) -> None:
        self._summary = summary
        self._task: asyncio.Task[None] | None = None
        self._due: datetime | None = None

    async def wait(self, woken: Callable[[], bool], *, idle: timedelta) -> bool:
        """Wait for ``woken()``: ``True`` once it holds, ``False`` after ``idle`` without it.

        The timer running from an earlier wait is kept when it is due no later than this
        wait's end, and started again when it fires before that end; one due later (the
        idle time shrank, say once an exchange ended) is cancelled for an earlier one.
        """
        deadline = workflow.now() + idle
        while not woken():
            now = workflow.now()
            if now >= deadline:
                return False
            if self._task is not None and (
                self._task.done() or (self._due is not None and self._due > deadline)
            ):
                self._task.cancel()
                self._task = None
            if self._task is None:
                self._due = deadline
                self._task = asyncio.create_task(
                    workflow.sleep(deadline - now, summary=self._summary)
                )
            await workflow.wait_condition(_either(woken, self._task))
        return True

    def stop(self) -> None:
        """Cancel the timer, if one runs (the conversation closes)."""
        if self._task is not None and not self._task.done():
            self._task.cancel()
        self._task = None


def _either(woken: Callable[[], bool], timer: asyncio.Task[None]) -> Callable[[], bool]:
    """A condition that holds once ``woken()`` holds or ``timer`` is done."""
    return lambda: woken() or timer.done()
