"""Bounded steps: a database step on the message path that cannot hold an agent for long.

An event holds its agent's inbox from the moment the agent takes it until its marker is
recorded, and every event behind it waits. A step retried without limit (the SDK's local
activity retries, which the workflow cannot see) turned one unstorable byte into a silent
12-minute stall for everyone. So a step on the message path runs here instead:

* each attempt is one local activity with a single try, so the workflow counts attempts and
  the reason of the last failure, and reports them (``workflow.set_current_details`` and the
  caller's ``report``: the agent's ``status`` query);
* a failure the same input will always cause (``PERMANENT_ERRORS``, or one the activity marks
  non-retryable) ends the step at once;
* other failures (the database restarting) are retried, from 0.2 s doubling up to
  :data:`~contract.policies.MESSAGE_STEP_MAX_INTERVAL` between attempts, until
  :data:`~contract.policies.MESSAGE_STEP_LIMIT` has passed since the first attempt (read from
  times the history fixes, :class:`Elapsed`);
* then :class:`StepFailedError` names the step, the attempts and the last reason, and the caller
  ends the event with a ``failed`` marker saying so.

Deterministic: only ``workflow`` APIs (durable timers between attempts).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import TypeVar

from temporalio import workflow
from temporalio.exceptions import ActivityError, ApplicationError

from contract.policies import (
    DATABASE_RETRY,
    MESSAGE_STEP_LIMIT,
    MESSAGE_STEP_MAX_INTERVAL,
    PERMANENT_ERRORS,
)

R = TypeVar("R")

REASON_CHARS = 300
"""How much of a failure's message a report and a marker keep (one line)."""


class StepFailedError(Exception):
    """A bounded step gave up; the event it served ends with a ``failed`` marker."""

    def __init__(self, step: str, attempts: int, reason: str) -> None:
        self.step = step
        self.attempts = attempts
        self.reason = reason
        tries = "1 attempt" if attempts == 1 else f"{attempts} attempts"
        super().__init__(f"step '{step}' failed after {tries}: {reason}")


@dataclass(frozen=True)
class Progress:
    """Where a bounded step stands, for the caller's status and the Web UI."""

    step: str
    attempt: int
    started_at: datetime
    last_error: str | None


def one_line(err: BaseException) -> str:
    """The failure's own first line, without the SDK's wrapping (and no SQL it quoted)."""
    cause = err.cause if isinstance(err, ActivityError) and err.cause is not None else err
    message = cause.message if isinstance(cause, ApplicationError) else str(cause)
    kind = cause.type if isinstance(cause, ApplicationError) and cause.type else ""
    # The first line only: a database error goes on with the statement and its parameters,
    # which may quote what a person said, and a marker and a status are no place for that.
    first = (message or kind or type(cause).__name__).strip().split("\n", 1)[0]
    text = " ".join(first.split())
    if kind and kind not in text:
        text = f"{kind}: {text}"
    return text[:REASON_CHARS]


def is_permanent(err: ActivityError | ApplicationError) -> bool:
    """Whether the same input will fail the same way (no retry can help)."""
    cause = err.cause if isinstance(err, ActivityError) else err
    if not isinstance(cause, ApplicationError):
        return False
    return cause.non_retryable or (cause.type or "") in PERMANENT_ERRORS


def _backoff(attempt: int) -> timedelta:
    first = DATABASE_RETRY.initial_interval
    ceiling = MESSAGE_STEP_MAX_INTERVAL
    # The exponent is capped: past it the ceiling applies anyway, and a large power overflows.
    factor = DATABASE_RETRY.backoff_coefficient ** min(attempt - 1, 16)
    return min(first * factor, ceiling)


class Elapsed:
    """How long a step has retried, read only from times its history fixes.

    The decision to try again or give up is a command, so replay must reach the same one.
    ``workflow.now()`` just after a local activity is not such a time: a query that arrives
    while the activity runs can make the worker finish the task early, and the code after the
    activity then runs in the next task, at that task's time, where replay runs it in the first
    (docs/operations.md, "Patches up front"). The time a durable timer fired is fixed: so the
    clock starts when the first retry begins, and the first attempt counts as its pause before
    it. What this leaves out is the run of the first attempt and of the current one (each at
    most its timeout, 15 s): a step that keeps failing slowly ends within its limit and 45 s.
    """

    def __init__(self) -> None:
        self._first_retry: datetime | None = None
        self._resumed: datetime | None = None
        self._first_wait = timedelta(0)

    def waited(self, wait: timedelta) -> None:
        """A pause of ``wait`` ended: now is the history's time of the timer's firing."""
        self._resumed = workflow.now()
        if self._first_retry is None:
            self._first_retry, self._first_wait = self._resumed, wait

    def so_far(self) -> timedelta:
        """The time from the first attempt to the start of the current one, as fixed."""
        if self._first_retry is None or self._resumed is None:
            return timedelta(0)  # only the first attempt has run
        return self._resumed - self._first_retry + self._first_wait


async def bounded(
    attempt: Callable[[], Awaitable[R]],
    *,
    step: str,
    doing: str,
    report: Callable[[Progress | None], None] | None = None,
    limit: timedelta = MESSAGE_STEP_LIMIT,
) -> R:
    """Run ``attempt`` (one local activity with a single try) until it succeeds, or give up.

    Args:
        attempt: Makes one attempt: ``lambda: workflow.execute_local_activity_method(...)``
            with a one-try policy (``contract.policies.MESSAGE_STEP``).
        step: The step's name, as the marker and ``persyn status`` show it.
        doing: What the run is doing, for the Web UI's current details.
        report: Told before every attempt (with the last failure's reason), and ``None``
            once the step is over.
        limit: The longest the step retries, from its first attempt.

    Raises:
        StepFailedError: The failure is permanent, or ``limit`` passed.
    """
    started = workflow.now()  # shown to the caller only; the decision reads ``elapsed``
    elapsed = Elapsed()
    tries = 0
    last: str | None = None
    try:
        while True:
            tries += 1
            if report is not None:
                report(Progress(step, tries, started, last))
            try:
                return await attempt()
            # A local activity's failure arrives as its ApplicationError, not wrapped.
            except (ActivityError, ApplicationError) as err:
                reason = last = one_line(err)
                wait = _backoff(tries)
                if is_permanent(err) or elapsed.so_far() + wait > limit:
                    workflow.set_current_details(f"{doing}: step '{step}' failed: {reason}")
                    raise StepFailedError(step, tries, reason) from None
                workflow.set_current_details(
                    f"{doing}: step '{step}' is retrying (attempt {tries} failed: {reason})"
                )
                await workflow.sleep(wait, summary=f"retry '{step}' after attempt {tries}")
                elapsed.waited(wait)
    finally:
        if report is not None:
            report(None)
