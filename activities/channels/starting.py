"""Starting delivery runs: one ``DeliveryWorkflow`` per outbox row, ever.

The activity that inserts an outbox row starts its delivery at once; the workflow ID is the
row's, and ID reuse is refused, so a retried insert (or a sweep racing it) never delivers a row
twice. A crash between the insert and the start leaves the row pending: the sweep every worker
runs, as it starts and then every ``delivery.sweep_every_seconds``, gives each such row its run.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from datetime import UTC, datetime, timedelta

from pydantic import ValidationError
from temporalio import activity
from temporalio.client import Client
from temporalio.common import WorkflowIDReusePolicy
from temporalio.exceptions import WorkflowAlreadyStartedError

from contract import names
from schemas.delivery import DeliveryInput, DeliverySettings, DeliveryStatus
from schemas.events import ChannelRef
from store.db import Database
from store.queries.delivery import pending_messages, settle

log = logging.getLogger(__name__)

DELIVERY_TRIGGER = "delivery"


def channel_ref(key: str) -> ChannelRef:
    """A stored ``service:channel`` key as a channel."""
    service, _, name = key.partition(":")
    return ChannelRef(service=service, channel=name)


async def start_delivery(
    client: Client,
    *,
    message_id: str,
    agent: str,
    channel: ChannelRef,
    unprompted: bool,
    settings: DeliverySettings,
    conversation_id: str | None = None,
    task_queue: str | None = None,
) -> None:
    """Start the row's delivery run unless one was ever started, tagged for the Web UI.

    It runs on the calling activity's task queue (``task_queue`` outside an activity).
    """
    queue = activity.info().task_queue if activity.in_activity() else task_queue
    if queue is None:
        raise ValueError("start_delivery outside an activity needs a task queue")
    kind = "unprompted message" if unprompted else "reply"
    with contextlib.suppress(WorkflowAlreadyStartedError):
        await client.start_workflow(
            names.DELIVERY_WORKFLOW,
            DeliveryInput(
                message_id=message_id,
                agent=agent,
                channel=channel,
                unprompted=unprompted,
                give_up_seconds=settings.give_up_seconds,
            ),
            id=names.delivery_workflow_id(message_id),
            task_queue=queue,
            id_reuse_policy=WorkflowIDReusePolicy.REJECT_DUPLICATE,
            search_attributes=names.search_attributes(
                agent=agent,
                channel=channel.key,
                conversation=conversation_id,
                trigger=DELIVERY_TRIGGER,
            ),
            static_summary=f"deliver {agent}'s {kind} on {channel.key}",
            static_details=f"outbox message {message_id}",
        )


async def sweep_pending(
    db: Database,
    client: Client,
    *,
    task_queue: str,
    settings: DeliverySettings,
    now: datetime | None = None,
    seen: set[str] | None = None,
) -> int:
    """Start a delivery run for every row left pending (a start lost to a crash).

    Args:
        db: The store.
        client: Where to start the runs.
        task_queue: Their task queue.
        settings: How old a pending row must be.
        now: The time (tests).
        seen: Rows a previous sweep of this process handled; skipped, then added to.

    Returns:
        How many rows were given a start (a row whose run exists is left to it).
    """
    cutoff = (now or datetime.now(UTC)) - timedelta(seconds=settings.sweep_after_seconds)
    async with db.session() as session:
        rows = await pending_messages(session, older_than=cutoff)
    if seen is not None:
        # Forget rows no longer pending (bounded memory), skip those already handled.
        seen.intersection_update(row.id for row in rows)
        rows = [row for row in rows if row.id not in seen]
    started = 0
    for row in rows:
        try:
            channel = channel_ref(row.channel_key)
        except ValueError as err:
            # A row no channel can take (written by hand, or by an older version) fails on
            # its own, saying why, instead of stopping every sweep at it.
            await _fail_unroutable(db, row.id, row.channel_key, err)
            continue
        await start_delivery(
            client,
            message_id=row.id,
            agent=row.agent,
            channel=channel,
            unprompted=row.unprompted,
            settings=settings,
            conversation_id=row.conversation_id,
            task_queue=task_queue,
        )
        started += 1
        if seen is not None:
            seen.add(row.id)
    if started:
        log.info("delivery sweep: %d pending outbox messages given a run", started)
    return started


async def _fail_unroutable(db: Database, message_id: str, key: str, err: ValueError) -> None:
    detail = err.errors()[0]["msg"] if isinstance(err, ValidationError) else str(err)
    reason = f"its channel key {key[:200]!r} names no channel (service:channel): {detail}"
    log.warning("delivery sweep: outbox message %s failed: %s", message_id, reason)
    async with db.session() as session:
        await settle(session, message_id=message_id, status=DeliveryStatus.FAILED, reason=reason)


async def sweep_forever(
    db: Database, client: Client, *, task_queue: str, settings: DeliverySettings
) -> None:
    """Sweep now and then every ``settings.sweep_every_seconds`` until cancelled; never fails."""
    seen: set[str] = set()
    while True:
        try:
            await sweep_pending(db, client, task_queue=task_queue, settings=settings, seen=seen)
        except Exception as err:  # the next sweep tries again
            log.warning("delivery sweep failed: %s", err)
        await asyncio.sleep(settings.sweep_every_seconds)
