"""Outbound delivery: once per outbox row, retried, given up on, kept for pickup."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from sqlmodel import select
from temporalio.client import Client, WorkflowExecutionStatus
from temporalio.service import RPCError

from activities.channels.adapters.base import DeliveryError
from activities.channels.adapters.pull import answered_in_place
from activities.channels.starting import start_delivery, sweep_pending
from contract import names
from schemas.delivery import DeliveryResult, DeliverySettings, DeliveryStatus
from schemas.events import ChannelRef, Receipt
from schemas.ids import new_ulid
from store.queries.contacts import send_unprompted
from store.queries.delivery import kept_for_pickup, mark_picked_up
from store.queries.runtime import add_outbox
from store.tables import DialogTurnRow, OutboxRow
from tests.channels.helpers import CueAdapter, channel_worker, outbox_row, queue_unprompted
from tests.harness import Harness, Stack, terminal


async def _result(client: Client, message_id: str) -> DeliveryResult:
    handle = client.get_workflow_handle(
        names.delivery_workflow_id(message_id), result_type=DeliveryResult
    )
    result: DeliveryResult = await handle.result()
    return result


async def _reply_row(harness: Harness, receipt: Receipt) -> OutboxRow:
    """The one outbox row of the reply the receipt names."""
    assert receipt.marker is not None and receipt.marker.activation_id
    async with harness.db.session() as session:
        [row] = list(
            await session.exec(
                select(OutboxRow).where(OutboxRow.activation_id == receipt.marker.activation_id)
            )
        )
    return row


async def test_a_terminal_reply_is_delivered_with_its_receipt_and_needs_no_run(
    harness: Harness,
) -> None:
    agent = await harness.create_agent()
    receipt = await harness.say(agent.handle, "hello there")
    assert receipt.marker is not None and receipt.marker.text

    async with harness.db.session() as session:
        rows = list(await session.exec(select(OutboxRow).where(OutboxRow.agent == agent.handle)))
    assert [(row.status, row.attempts) for row in rows] == [("delivered", 0)]
    assert rows[0].delivered_at is not None
    with pytest.raises(RPCError):
        await harness.client.get_workflow_handle(names.delivery_workflow_id(rows[0].id)).describe()


async def test_a_reply_on_a_push_channel_is_delivered_by_its_own_run(
    client: Client, stack: Stack
) -> None:
    chat = CueAdapter("chat")
    async with channel_worker(client, stack, adapters=[chat]) as harness:
        agent = await harness.create_agent()
        receipt = await harness.say(
            agent.handle, "hello there", channel=ChannelRef(service="chat", channel="room")
        )
        row = await _reply_row(harness, receipt)
        result = await _result(client, row.id)

    assert result.status is DeliveryStatus.DELIVERED
    assert chat.delivered == [row.id]
    settled = await outbox_row(harness, row.id)
    assert settled is not None and (settled.status, settled.attempts) == ("delivered", 1)


async def test_an_unprompted_terminal_message_is_kept_until_picked_up(harness: Harness) -> None:
    agent = await harness.create_agent()
    message_id = await queue_unprompted(harness, agent.handle, terminal(), "while you were away")

    assert (await _result(harness.client, message_id)).status is DeliveryStatus.AWAITING_PICKUP
    async with harness.db.session() as session:
        kept = await kept_for_pickup(session, agent=agent.handle, channel_key="terminal:tty")
        assert [row.id for row in kept] == [message_id]
        assert await mark_picked_up(session, message_ids=[message_id]) == 1
        assert await mark_picked_up(session, message_ids=[message_id]) == 0
        assert await kept_for_pickup(session, agent=agent.handle, channel_key="terminal:tty") == []
    row = await outbox_row(harness, message_id)
    assert row is not None and row.status == "delivered" and row.delivered_at is not None


async def test_retryable_failures_are_retried_and_the_row_is_delivered_once(
    client: Client, stack: Stack
) -> None:
    flaky = CueAdapter(
        "flaky",
        errors=[DeliveryError("503 busy"), DeliveryError("429 slow down", retry_after=0.2)],
    )
    async with channel_worker(client, stack, adapters=[flaky]) as harness:
        agent = await harness.create_agent()
        channel = ChannelRef(service="flaky", channel="room")
        message_id = await queue_unprompted(harness, agent.handle, channel, "are you there?")
        # A second start for the same row (a retried insert, a sweep) starts nothing.
        await start_delivery(
            client,
            message_id=message_id,
            agent=agent.handle,
            channel=channel,
            unprompted=True,
            settings=DeliverySettings(),
            task_queue=harness.task_queue,
        )
        result = await _result(client, message_id)

    assert result.status is DeliveryStatus.DELIVERED
    assert flaky.calls == [message_id] * 3
    assert flaky.delivered == [message_id]
    row = await outbox_row(harness, message_id)
    assert row is not None
    assert (row.status, row.attempts, row.external_id, row.last_error) == (
        "delivered",
        3,
        "x-1",
        None,
    )


async def test_a_refused_delivery_fails_visibly_after_a_retryable_error(
    client: Client, stack: Stack
) -> None:
    broken = CueAdapter(
        "broken",
        errors=[DeliveryError("timeout"), DeliveryError("chat not found", retryable=False)],
    )
    async with channel_worker(client, stack, adapters=[broken]) as harness:
        agent = await harness.create_agent()
        channel = ChannelRef(service="broken", channel="gone")
        message_id = await queue_unprompted(harness, agent.handle, channel, "hello?")
        result = await _result(client, message_id)
        described = await client.get_workflow_handle(
            names.delivery_workflow_id(message_id)
        ).describe()

    assert result.status is DeliveryStatus.FAILED
    assert result.reason is not None and "chat not found" in result.reason
    assert broken.calls == [message_id] * 2 and broken.delivered == []
    row = await outbox_row(harness, message_id)
    assert row is not None and (row.status, row.attempts) == ("failed", 2)
    assert row.last_error is not None and "chat not found" in row.last_error
    assert described.status == WorkflowExecutionStatus.COMPLETED
    assert described.typed_search_attributes.get(names.OUTCOME) == "failed"


async def test_a_reply_on_a_service_without_adapter_went_back_with_its_receipt(
    harness: Harness,
) -> None:
    # An integrator's own service: its client had the reply with the marker, nothing to push.
    agent = await harness.create_agent()
    receipt = await harness.say(
        agent.handle, "hello there", channel=ChannelRef(service="crm", channel="case-7")
    )
    row = await _reply_row(harness, receipt)
    result = await _result(harness.client, row.id)

    assert result.status is DeliveryStatus.DELIVERED
    settled = await outbox_row(harness, row.id)
    assert settled is not None and settled.status == "delivered" and settled.last_error is None


async def test_an_unprompted_message_on_a_service_without_adapter_is_kept_for_pickup(
    harness: Harness,
) -> None:
    # An integrator's own service: its client pulls the message (the pull_outbox update).
    agent = await harness.create_agent()
    channel = ChannelRef(service="pager", channel="night")
    message_id = await queue_unprompted(harness, agent.handle, channel, "wake up")
    result = await _result(harness.client, message_id)
    assert (result.status, result.reason) == (DeliveryStatus.AWAITING_PICKUP, None)
    row = await outbox_row(harness, message_id)
    assert row is not None and row.status == "awaiting_pickup" and row.last_error is None


async def test_the_sweep_gives_a_row_without_a_run_its_delivery_once(harness: Harness) -> None:
    agent = await harness.create_agent()
    message_id = new_ulid()
    async with harness.db.session() as session:
        # Written as the sandbox's report is, with no delivery started (or one lost to a crash).
        await send_unprompted(
            session,
            message_id=message_id,
            agent=agent.handle,
            agent_name="Tester",
            channel=terminal(),
            text="your task finished",
            at=datetime.now(UTC),
        )
    settings = DeliverySettings(sweep_after_seconds=0)
    later = datetime.now(UTC) + timedelta(seconds=1)
    seen: set[str] = set()
    swept = await sweep_pending(
        harness.db,
        harness.client,
        task_queue=harness.task_queue,
        settings=settings,
        now=later,
        seen=seen,
    )
    assert swept >= 1 and message_id in seen
    assert (await _result(harness.client, message_id)).status is DeliveryStatus.AWAITING_PICKUP
    # A second sweep finds nothing of it to do: it is no longer pending.
    await sweep_pending(
        harness.db,
        harness.client,
        task_queue=harness.task_queue,
        settings=settings,
        now=later,
        seen=seen,
    )
    assert message_id not in seen


async def test_a_row_no_channel_can_take_fails_alone_and_the_sweep_goes_on(
    harness: Harness,
) -> None:
    agent = await harness.create_agent()
    broken, good = new_ulid(), new_ulid()
    at = datetime.now(UTC)
    async with harness.db.session() as session:
        # Older than the good row, so a sweep that stopped at it would never reach the next.
        await add_outbox(
            session,
            message_id=broken,
            activation_id=broken,
            agent=agent.handle,
            channel_key="no-colon-here",
            conversation_id=None,
            text_="lost?",
            created_at=at - timedelta(seconds=5),
            unprompted=True,
        )
        await send_unprompted(
            session,
            message_id=good,
            agent=agent.handle,
            agent_name="Tester",
            channel=terminal(),
            text="still delivered",
            at=at,
        )
    swept = await sweep_pending(
        harness.db,
        harness.client,
        task_queue=harness.task_queue,
        settings=DeliverySettings(sweep_after_seconds=0),
        now=at + timedelta(seconds=1),
    )
    assert swept >= 1
    assert (await _result(harness.client, good)).status is DeliveryStatus.AWAITING_PICKUP
    failed = await outbox_row(harness, broken)
    assert failed is not None and failed.status == DeliveryStatus.FAILED
    assert failed.last_error is not None and "'no-colon-here'" in failed.last_error
    assert failed.text == "lost?"  # kept, for the operator to see


async def test_the_agents_own_channel_is_delivered_by_being_written(harness: Harness) -> None:
    # A heartbeat's reflection is transmitted on self:reflection: nobody else hears it, so it
    # is written delivered with no run; a row that still gets a run (the sweep, an unprompted
    # message) is delivered by the own-channel adapter instead of failing for want of one.
    own = ChannelRef(service="self", channel="reflection")
    assert answered_in_place(own, unprompted=False) and answered_in_place(own, unprompted=True)
    assert not answered_in_place(terminal(), unprompted=True)

    agent = await harness.create_agent()
    message_id = await queue_unprompted(harness, agent.handle, own, "note to self")
    result = await _result(harness.client, message_id)
    assert result.status is DeliveryStatus.DELIVERED, result.reason


async def test_fence_markup_a_model_echoes_is_not_sent_or_stored(harness: Harness) -> None:
    # The scripted model echoes the message, as a small model echoed its prompt's fences.
    agent = await harness.create_agent()
    receipt = await harness.say(
        agent.handle, 'noted <material source="quick_facts," from="you">the cat</material>'
    )
    assert receipt.marker is not None and receipt.marker.text is not None
    assert "the cat" in receipt.marker.text and "material" not in receipt.marker.text
    row = await _reply_row(harness, receipt)
    assert row.text == receipt.marker.text
    async with harness.db.session() as session:
        turn = await session.get(DialogTurnRow, row.id)
    assert turn is not None and turn.text == receipt.marker.text

    message_id = await queue_unprompted(
        harness, agent.handle, terminal(), '<material source="notes">\nlater, then\n</material>'
    )
    queued = await outbox_row(harness, message_id)
    assert queued is not None and queued.text == "later, then"
