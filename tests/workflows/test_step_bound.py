"""A bounded step decides to retry or give up from times its history fixes.

The code after a local activity may run in a later workflow task than the one replay runs it in
(a query during the activity), so ``workflow.now()`` read there differs between the live run
and its replay. The decision is a command (a timer, or the step's failure), so it must not read
that time. These tests run ``workflows.steps.bounded`` outside a worker with the ``workflow``
calls it makes replaced, and move the clock after each failed attempt by as much as they like.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from temporalio import workflow
from temporalio.exceptions import ApplicationError

from contract.policies import MESSAGE_STEP_LIMIT
from workflows.steps import StepFailedError, bounded

START = datetime(2026, 12, 5, 12, 0, tzinfo=UTC)


class Clock:
    """``workflow.now()`` and ``workflow.sleep`` as one run of a step reads them.

    Each attempt runs ``run`` before it fails, and the failure is handled ``late`` after that
    (a query split the task). Every run of the same history shares these times; what differs
    is what ``workflow.now()`` reads after a failed attempt: the live run reads the time the
    failure was handled, its replay the time of the task the attempt started in. After a
    timer, both read the time the history says it fired.
    """

    def __init__(self, *, run: timedelta, late: timedelta, replaying: bool) -> None:
        self.real = START
        self.reading = START
        self.run, self.late, self.replaying = run, late, replaying
        self.waits: list[timedelta] = []

    def now(self) -> datetime:
        return self.reading

    async def sleep(self, wait: timedelta, **_: object) -> None:
        self.waits.append(wait)
        self.real += wait
        self.reading = self.real

    async def attempt(self) -> str:
        started = self.real
        self.real += self.run + self.late
        self.reading = started if self.replaying else self.real
        raise ApplicationError("connection lost")


async def _tries(clock: Clock, monkeypatch: pytest.MonkeyPatch) -> int:
    monkeypatch.setattr(workflow, "now", clock.now)
    monkeypatch.setattr(workflow, "sleep", clock.sleep)
    monkeypatch.setattr(workflow, "set_current_details", lambda _details: None)
    with pytest.raises(StepFailedError) as failed:
        await bounded(clock.attempt, step="admit the event", doing="test")
    assert "connection lost" in str(failed.value)
    return failed.value.attempts


@pytest.mark.parametrize("late", [timedelta(seconds=s) for s in (1, 4, 9, 14)])
async def test_a_run_and_its_replay_retry_as_often_whenever_the_failure_was_handled(
    late: timedelta, monkeypatch: pytest.MonkeyPatch
) -> None:
    run = timedelta(milliseconds=300)
    live = Clock(run=run, late=late, replaying=False)
    replay = Clock(run=run, late=late, replaying=True)
    assert await _tries(live, monkeypatch) == await _tries(replay, monkeypatch)
    assert live.waits == replay.waits


async def test_a_step_that_keeps_failing_gives_up_before_its_pauses_pass_the_limit(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    clock = Clock(run=timedelta(0), late=timedelta(0), replaying=False)
    tries = await _tries(clock, monkeypatch)
    assert tries == len(clock.waits) + 1
    paused = sum(clock.waits, timedelta(0))
    # It retried while the next pause stayed within the limit, and no longer.
    assert paused <= MESSAGE_STEP_LIMIT < paused + clock.waits[-1]


async def test_attempts_that_run_long_bring_the_end_closer(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Every attempt but the one that just failed counts: its time is in the timers' times."""
    quick = Clock(run=timedelta(0), late=timedelta(0), replaying=False)
    slow = Clock(run=timedelta(seconds=10), late=timedelta(0), replaying=False)
    assert await _tries(slow, monkeypatch) < await _tries(quick, monkeypatch)
    # It ended within its limit and three attempts' time: the pause it would have taken next
    # passed the limit, and the first and the last attempt's own runs are not counted.
    assert slow.real - START <= MESSAGE_STEP_LIMIT + 3 * timedelta(seconds=10)
