"""Submitting from the terminal without waiting in silence.

``persyn send`` and ``persyn chat`` wait for the agent's receipt. Two things can make that wait
endless: no worker serves the task queue (the stack is down, or its worker died), or Temporal
itself is unreachable. Both are said in one line with what to do. A submission is retried on
transient connection errors with the same event ID, which Temporal and the agent answer once,
and ``send`` names that ID before it contacts Temporal, so a person can resend it by hand.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable

from temporalio.client import Client, WorkflowUpdateRPCTimeoutOrCancelledError
from temporalio.runtime import LoggingConfig, Runtime, TelemetryConfig, TelemetryFilter
from temporalio.service import RPCError, RPCStatusCode

from cli.common import UserError
from schemas.events import InboundEvent, Receipt
from schemas.settings import Settings
from temporal import inbox
from temporal.client import TemporalUnavailableError, connect
from workers.health import serving
from workers.supervisor_state import read_state

RETRY_FOR_S = 10.0
"""How long a submission keeps retrying while Temporal does not answer."""

RESTART_GRACE_S = 15.0
"""How long a supervised worker may be away (the supervisor restarting it) before we say so."""

WATCH_EVERY_S = 1.0

_TRANSIENT = {RPCStatusCode.UNAVAILABLE, RPCStatusCode.DEADLINE_EXCEEDED, RPCStatusCode.UNKNOWN}
"""A server going away mid-call shows as "transport error" with an unknown status; resending the
same event is safe whatever the cause."""


def resend_hint(event_id: str) -> str:
    """The tail of a message after which resending the same event is safe."""
    return f"then resend with --event-id {event_id}"


def no_worker(settings: Settings) -> str:
    """The one line that says no worker serves the task queue, and what to do."""
    return f"no worker is serving task queue {settings.task_queue!r}: run `persyn up`"


def quiet_sdk_logs() -> None:
    """Keep the Temporal SDK's retry warnings off the terminal (before the first connection).

    Its core logs every retried call to stderr; the command says what matters in one line.
    """
    quiet = LoggingConfig(filter=TelemetryFilter(core_level="ERROR", other_level="ERROR"))
    Runtime.set_default(
        Runtime(telemetry=TelemetryConfig(logging=quiet)), error_if_already_set=False
    )


async def connect_for(settings: Settings, event_id: str) -> Client:
    """Connect, retrying for a while; a server that stays away is one line naming the event.

    Raises:
        UserError: Temporal did not answer.
    """
    quiet_sdk_logs()
    try:
        return await connect(settings, ready_within=RETRY_FOR_S)
    except TemporalUnavailableError as err:
        raise UserError(f"{err}, {resend_hint(event_id)}") from None


def _grace(settings: Settings) -> float:
    # A supervised worker that died is being restarted: give it the time a restart takes.
    return RESTART_GRACE_S if read_state(settings) is not None else 0.0


async def _serving(settings: Settings, client: Client) -> bool:
    try:
        return await serving(settings, client)
    except RPCError:
        return True  # Temporal cannot tell us; the submission itself reports that it is down


async def _gone(settings: Settings, client: Client, grace: float) -> None:
    """Return once no worker has served the task queue for ``grace`` seconds."""
    missing_since: float | None = None
    while True:
        if await _serving(settings, client):
            missing_since = None
        else:
            now = time.monotonic()
            missing_since = missing_since if missing_since is not None else now
            if now - missing_since >= grace:
                return
        await asyncio.sleep(WATCH_EVERY_S)


async def _back(settings: Settings, client: Client) -> None:
    while True:
        if await _serving(settings, client):
            return
        await asyncio.sleep(WATCH_EVERY_S)


async def _submit_retrying(
    client: Client, settings: Settings, *, handle: str, event: InboundEvent
) -> Receipt:
    deadline = time.monotonic() + RETRY_FOR_S
    delay = 0.5
    while True:
        try:
            return await inbox.submit(
                client, handle=handle, event=event, task_queue=settings.task_queue
            )
        except (RPCError, WorkflowUpdateRPCTimeoutOrCancelledError) as err:
            task = asyncio.current_task()
            if task is not None and task.cancelling():
                # The SDK reports our own cancellation as this error: stop, do not retry.
                raise asyncio.CancelledError from err
            transient = not isinstance(err, RPCError) or err.status in _TRANSIENT
            if not transient:
                raise
            if time.monotonic() >= deadline:
                raise UserError(
                    f"cannot reach Temporal at {settings.temporal_address}: run `persyn up`, "
                    f"{resend_hint(event.event_id)}"
                ) from None
        await asyncio.sleep(delay)
        delay = min(delay * 2, 4.0)


async def submit(
    client: Client,
    settings: Settings,
    *,
    handle: str,
    event: InboundEvent,
    on_no_worker: Callable[[str], None] | None = None,
) -> Receipt:
    """Submit ``event`` and wait for the receipt, watching that a worker serves meanwhile.

    Args:
        client: A connected client.
        settings: The task queue, and where the worker's liveness is kept.
        handle: The agent.
        event: What to submit; its ID makes every retry the same submission.
        on_no_worker: Told (once per absence) that no worker serves, with the line to show;
            the wait goes on and the receipt comes when a worker returns. Without it, the
            absence ends the wait with a :class:`UserError`.

    Raises:
        UserError: No worker serves (without ``on_no_worker``), or Temporal stayed away.
    """
    away = False
    if not await _serving(settings, client):
        # `send` sends nothing then (the person decides what next); `chat` lets it wait.
        if on_no_worker is None:
            try:
                await asyncio.wait_for(_back(settings, client), _grace(settings))
            except TimeoutError:
                raise UserError(f"{no_worker(settings)}, {resend_hint(event.event_id)}") from None
        else:
            on_no_worker(no_worker(settings))
            away = True
    submission = asyncio.create_task(_submit_retrying(client, settings, handle=handle, event=event))
    try:
        while True:
            # Watch for the worker to come back while it is away, else for it to go.
            watch = _back(settings, client) if away else _gone(settings, client, _grace(settings))
            watcher = asyncio.create_task(watch)
            await asyncio.wait({submission, watcher}, return_when=asyncio.FIRST_COMPLETED)
            watcher.cancel()
            if submission.done():
                return submission.result()
            if not away and on_no_worker is None:
                raise UserError(f"{no_worker(settings)}, {resend_hint(event.event_id)}")
            if not away and on_no_worker is not None:
                on_no_worker(no_worker(settings))
            away = not away
    finally:
        submission.cancel()
