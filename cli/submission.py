"""Submitting from the terminal without waiting in silence: the terminal's wording.

``persyn send`` and ``persyn chat`` wait for the agent's receipt through
:mod:`usecases.submission`, which refuses an endless wait (no worker, no Temporal). Here those
refusals get the terminal's hint: run ``persyn up``, then resend with the same event ID, which
``send`` names before it contacts Temporal. Whether a worker serves is this home's to say
(:class:`workers.presence.HomePresence`), unless the caller brings its own presence.
"""

from __future__ import annotations

from collections.abc import Callable

from temporalio.client import Client

from cli.common import UserError
from schemas.events import InboundEvent, Receipt
from schemas.settings import Settings
from usecases import submission
from usecases.errors import NoWorkerError, TemporalUnreachableError
from usecases.presence import WorkerPresence
from workers.presence import HomePresence

quiet_sdk_logs = submission.quiet_sdk_logs


def resend_hint(event_id: str) -> str:
    """The tail of a message after which resending the same event is safe."""
    return f"then resend with --event-id {event_id}"


def no_worker(settings: Settings) -> str:
    """The one line that says no worker serves the task queue, and what to do."""
    return f"{NoWorkerError(settings.task_queue).line}: run `persyn up`"


def _worded(err: NoWorkerError | TemporalUnreachableError, event_id: str) -> UserError:
    return UserError(f"{err}: run `persyn up`, {resend_hint(event_id)}")


async def connect_for(settings: Settings, event_id: str) -> Client:
    """Connect, retrying for a while; a server that stays away is one line naming the event.

    Raises:
        UserError: Temporal did not answer.
    """
    try:
        return await submission.connect_client(settings=settings, event_id=event_id)
    except TemporalUnreachableError as err:
        raise UserError(f"{err}, {resend_hint(event_id)}") from None


async def submit(
    client: Client,
    settings: Settings,
    *,
    handle: str,
    event: InboundEvent,
    on_no_worker: Callable[[str], None] | None = None,
    presence: WorkerPresence | None = None,
) -> Receipt:
    """Submit ``event`` and wait for the receipt (see :func:`usecases.submission.submit`).

    ``presence`` says whether a worker serves; by default, the workers of ``settings``'s home.

    Raises:
        UserError: No worker serves (without ``on_no_worker``), or Temporal stayed away.
    """
    notice = None if on_no_worker is None else (lambda _: on_no_worker(no_worker(settings)))
    try:
        return await submission.submit(
            client=client,
            settings=settings,
            presence=presence or HomePresence(settings),
            handle=handle,
            event=event,
            on_no_worker=notice,
        )
    except (NoWorkerError, TemporalUnreachableError) as err:
        raise _worded(err, event.event_id) from None
