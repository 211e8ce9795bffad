"""Submitting an event to an agent, for every channel: the terminal, the web, team chat.

A submission never waits in silence. Two things can make a wait endless: no worker serves the
task queue (the stack is down, or its worker died), or Temporal itself is unreachable; both are
refused with an error the channel words in its own way. Whether a worker serves is the channel's
:class:`~usecases.presence.WorkerPresence` to say, so nothing here reads the workers' files. A
submission is retried on transient connection errors with the same event ID, which Temporal and
the agent answer once.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import TypeVar

from temporalio.client import Client, WorkflowUpdateRPCTimeoutOrCancelledError
from temporalio.runtime import LoggingConfig, Runtime, TelemetryConfig, TelemetryFilter
from temporalio.service import RPCError, RPCStatusCode

from schemas.events import (
    ChannelRef,
    InboundEvent,
    MarkerAnswer,
    Modality,
    Receipt,
    ReceiptStatus,
    Speaker,
)
from schemas.ids import new_ulid
from schemas.settings import Settings
from temporal import inbox
from temporal.client import TemporalUnavailableError, connect
from usecases.errors import NoWorkerError, TemporalUnreachableError
from usecases.presence import WorkerPresence

T = TypeVar("T")

RETRY_FOR_S = 10.0
"""How long a submission keeps retrying while Temporal does not answer."""

WATCH_EVERY_S = 1.0

_TRANSIENT = {RPCStatusCode.UNAVAILABLE, RPCStatusCode.DEADLINE_EXCEEDED, RPCStatusCode.UNKNOWN}
"""A server going away mid-call shows as "transport error" with an unknown status; resending the
same event is safe whatever the cause."""


def build_event(
    *,
    channel: ChannelRef,
    speaker: Speaker,
    text: str,
    event_id: str | None = None,
    addressed: bool = True,
    conversation_id: str | None = None,
    stream: bool = False,
    images: list[str] | None = None,
    recordings: list[str] | None = None,
) -> InboundEvent:
    """The ``InboundEvent`` a channel submits; a fresh ULID when the sender gave no event ID.

    Raises:
        ValueError: A field breaks the event's rules (pydantic names the field).
    """
    return InboundEvent(
        event_id=event_id or new_ulid(),
        channel=channel,
        speaker=speaker,
        text=text,
        addressed=addressed,
        conversation_id=conversation_id,
        stream=stream,
        images=images or [],
        recordings=recordings or [],
        modality=(Modality.IMAGE if images else Modality.AUDIO if recordings else Modality.TEXT),
    )


def quiet_sdk_logs() -> None:
    """Keep the Temporal SDK's retry warnings off the terminal (before the first connection).

    Its core logs every retried call to stderr; the channel says what matters in one line.
    """
    quiet = LoggingConfig(filter=TelemetryFilter(core_level="ERROR", other_level="ERROR"))
    Runtime.set_default(
        Runtime(telemetry=TelemetryConfig(logging=quiet)), error_if_already_set=False
    )


async def connect_client(*, settings: Settings, event_id: str | None = None) -> Client:
    """Connect, retrying for a while.

    Raises:
        TemporalUnreachableError: Temporal did not answer (it names ``event_id``, if given).
    """
    quiet_sdk_logs()
    try:
        return await connect(settings, ready_within=RETRY_FOR_S)
    except TemporalUnavailableError as err:
        raise TemporalUnreachableError(str(err), event_id=event_id) from None


async def _serving(presence: WorkerPresence, client: Client) -> bool:
    try:
        return await presence.serving(client)
    except RPCError:
        return True  # Temporal cannot tell us; the submission itself reports that it is down


async def _gone(presence: WorkerPresence, client: Client, grace: float) -> None:
    """Return once no worker has served the task queue for ``grace`` seconds."""
    missing_since: float | None = None
    while True:
        if await _serving(presence, client):
            missing_since = None
        else:
            now = time.monotonic()
            missing_since = missing_since if missing_since is not None else now
            if now - missing_since >= grace:
                return
        await asyncio.sleep(WATCH_EVERY_S)


async def _back(presence: WorkerPresence, client: Client) -> None:
    while True:
        if await _serving(presence, client):
            return
        await asyncio.sleep(WATCH_EVERY_S)


async def _retrying(settings: Settings, event: InboundEvent, call: Callable[[], Awaitable[T]]) -> T:
    """``call`` until it answers, retrying transient errors for :data:`RETRY_FOR_S`."""
    deadline = time.monotonic() + RETRY_FOR_S
    delay = 0.5
    while True:
        try:
            return await call()
        except (RPCError, WorkflowUpdateRPCTimeoutOrCancelledError) as err:
            task = asyncio.current_task()
            if task is not None and task.cancelling():
                # The SDK reports our own cancellation as this error: stop, do not retry.
                raise asyncio.CancelledError from err
            transient = not isinstance(err, RPCError) or err.status in _TRANSIENT
            if not transient:
                raise
            if time.monotonic() >= deadline:
                raise TemporalUnreachableError(
                    f"cannot reach Temporal at {settings.temporal_address}",
                    event_id=event.event_id,
                ) from None
        await asyncio.sleep(delay)
        delay = min(delay * 2, 4.0)


async def _watched(
    settings: Settings,
    presence: WorkerPresence,
    client: Client,
    event: InboundEvent,
    call: Callable[[], Awaitable[T]],
    on_no_worker: Callable[[str], None] | None,
) -> T:
    """Run ``call`` (retried) while watching that a worker serves the task queue."""
    refusal = NoWorkerError(settings.task_queue, event_id=event.event_id)
    away = False
    if not await _serving(presence, client):
        # Without a listener nothing is sent (the sender decides what next); with one it waits.
        if on_no_worker is None:
            try:
                await asyncio.wait_for(_back(presence, client), presence.grace())
            except TimeoutError:
                raise refusal from None
        else:
            on_no_worker(refusal.line)
            away = True
    submission = asyncio.create_task(_retrying(settings, event, call))
    try:
        while True:
            # Watch for the worker to come back while it is away, else for it to go.
            watch = _back(presence, client) if away else _gone(presence, client, presence.grace())
            watcher = asyncio.create_task(watch)
            await asyncio.wait({submission, watcher}, return_when=asyncio.FIRST_COMPLETED)
            watcher.cancel()
            if submission.done():
                return submission.result()
            if not away and on_no_worker is None:
                raise refusal
            if not away and on_no_worker is not None:
                on_no_worker(refusal.line)
            away = not away
    finally:
        submission.cancel()


async def submit(
    *,
    client: Client,
    settings: Settings,
    presence: WorkerPresence,
    handle: str,
    event: InboundEvent,
    on_no_worker: Callable[[str], None] | None = None,
) -> Receipt:
    """Submit ``event`` and wait for the receipt, watching that a worker serves meanwhile.

    Update-with-start on ``agent/{handle}`` with the event ID in the update ID, so every retry
    is the same submission and the agent replies once.

    Args:
        client: A connected client.
        settings: The task queue, and Temporal's address.
        presence: Whether a worker serves the task queue, as the channel's workers tell it.
        handle: The agent.
        event: What to submit; its ID makes every retry the same submission.
        on_no_worker: Told (once per absence) that no worker serves, with the line to show;
            the wait goes on and the receipt comes when a worker returns. Without it, the
            absence ends the wait with a :class:`NoWorkerError`.

    Raises:
        NoWorkerError: No worker serves (without ``on_no_worker``).
        TemporalUnreachableError: Temporal stayed away.
        SubmitRejectedError: The agent refused the event.
    """

    async def call() -> Receipt:
        return await inbox.submit(
            client, handle=handle, event=event, task_queue=settings.task_queue
        )

    return await _watched(settings, presence, client, event, call, on_no_worker)


async def accept(
    *,
    client: Client,
    settings: Settings,
    presence: WorkerPresence,
    handle: str,
    event: InboundEvent,
) -> Receipt:
    """Submit ``event`` and return once the agent has accepted it, before it is answered.

    The receipt's status is ``accepted`` and it has no marker yet: read it later with
    :func:`read_marker` (or wait with :func:`wait_for_receipt`). Accepting the same event again
    is the same submission.

    Raises:
        NoWorkerError: No worker serves the task queue (an agent's validator must run).
        TemporalUnreachableError: Temporal stayed away.
        SubmitRejectedError: The agent refused the event.
    """

    async def call() -> Receipt:
        await inbox.start_submit(client, handle=handle, event=event, task_queue=settings.task_queue)
        return Receipt(event_id=event.event_id, agent=handle, status=ReceiptStatus.ACCEPTED)

    return await _watched(settings, presence, client, event, call, None)


async def wait_for_receipt(
    *,
    client: Client,
    settings: Settings,
    presence: WorkerPresence,
    handle: str,
    event: InboundEvent,
    timeout: float,
) -> Receipt | None:
    """The completed receipt of an accepted ``event``, or ``None`` after ``timeout`` seconds."""
    try:
        return await asyncio.wait_for(
            submit(client=client, settings=settings, presence=presence, handle=handle, event=event),
            timeout,
        )
    except TimeoutError:
        return None


async def read_marker(*, client: Client, handle: str, event_id: str) -> MarkerAnswer:
    """How the event ended (``marker``), whether it is still ``pending``, or neither (unknown)."""
    return await inbox.marker(client, handle=handle, event_id=event_id)
