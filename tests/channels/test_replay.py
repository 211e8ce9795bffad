"""Delivery runs replay deterministically: fresh histories and recorded ones.

PERSYN_RECORD_HISTORIES=1 records a history that has no file yet; recorded ones are kept, never
rewritten: a change to workflow code must replay them (``workflow.patched``).
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest
from sqlmodel import col, select
from temporalio.client import Client, WorkflowHistory

from activities.channels.adapters.base import DeliveryError
from contract import names
from schemas.delivery import DeliveryResult, DeliveryStatus
from schemas.events import ChannelRef
from schemas.peers import agent_channel, peer_event_id
from store.queries.runtime import get_marker
from store.tables import OutboxRow
from tests.channels.helpers import CueAdapter, channel_worker, queue_unprompted
from tests.channels.test_converse import FAST_PACING, FOREVER
from tests.harness import Harness, Stack, record_new_histories, replayer
from tests.memory.formation.test_replay_formation import _scrubbed
from usecases.peers import StopReason, follow_conversation, start_conversation

HISTORIES = Path(__file__).parent / "histories"
NAMES = [
    "delivery_reply",
    "delivery_failed",
    "delivery_paced",
    "delivery_blocked",
    "agent_peer_inbox",
    "activation_withheld",
]


async def _result(client: Client, message_id: str) -> DeliveryResult:
    handle = client.get_workflow_handle(
        names.delivery_workflow_id(message_id), result_type=DeliveryResult
    )
    result: DeliveryResult = await handle.result()
    return result


async def _history(client: Client, workflow_id: str) -> WorkflowHistory:
    return await client.get_workflow_handle(workflow_id).fetch_history()


async def _scenario(harness: Harness) -> dict[str, WorkflowHistory]:
    """A reply delivered on a push channel, a delivery that fails, two agents until the budget
    withholds a reply, and a message of the agent that spent it, blocked by pacing."""
    client = harness.client
    agent = await harness.create_agent()
    receipt = await harness.say(
        agent.handle, "hello", channel=ChannelRef(service="chat", channel="room")
    )
    assert receipt.marker is not None and receipt.marker.activation_id
    async with harness.db.session() as session:
        reply = (
            await session.exec(
                select(OutboxRow).where(OutboxRow.activation_id == receipt.marker.activation_id)
            )
        ).one()
    assert (await _result(client, reply.id)).status is DeliveryStatus.DELIVERED

    broken = ChannelRef(service="broken", channel="gone")
    failed = await queue_unprompted(harness, agent.handle, broken, "anyone?")
    assert (await _result(client, failed)).status is DeliveryStatus.FAILED

    first = await harness.create_agent(name="Ada")
    second = await harness.create_agent(name="Bo")
    opening = await start_conversation(
        settings=harness.deps.settings,
        client=client,
        first=first.handle,
        second=second.handle,
        opening="Think about the moon tonight.",
        task_queue=harness.task_queue,
    )
    events = [
        e
        async for e in follow_conversation(
            settings=harness.deps.settings, opening_id=opening, timeout=120
        )
    ]
    end = events[-1]
    assert end.stopped is StopReason.BLOCKED
    async with harness.db.session() as session:
        withheld = await get_marker(
            session, event_id=peer_event_id(end.message_id), now=datetime.now(UTC)
        )
    assert withheld is not None and withheld.activation_id is not None
    blocked = await queue_unprompted(
        harness, end.sender, agent_channel(end.recipient), "One more thought about the moon."
    )
    assert (await _result(client, blocked)).status is DeliveryStatus.BLOCKED
    async with harness.db.session() as session:
        paced = (
            await session.exec(
                select(OutboxRow).where(
                    OutboxRow.agent == second.handle, col(OutboxRow.tokens).is_not(None)
                )
            )
        ).first()
    assert paced is not None
    return {
        "delivery_reply": await _history(client, names.delivery_workflow_id(reply.id)),
        "delivery_failed": await _history(client, names.delivery_workflow_id(failed)),
        "delivery_paced": await _history(client, names.delivery_workflow_id(paced.id)),
        "delivery_blocked": await _history(client, names.delivery_workflow_id(blocked)),
        "agent_peer_inbox": await _history(client, names.agent_workflow_id(second.handle)),
        "activation_withheld": await _history(
            client, names.activation_workflow_id(withheld.activation_id)
        ),
    }


async def test_fresh_delivery_histories_replay(client: Client, stack: Stack) -> None:
    adapters = [
        CueAdapter("chat"),
        CueAdapter(
            "broken", errors=[DeliveryError("timeout"), DeliveryError("gone", retryable=False)]
        ),
    ]
    overrides: dict[str, object] = {"pacing": {**FAST_PACING, "budget_tokens": 40}}
    async with channel_worker(
        client, stack, rules=FOREVER, adapters=adapters, settings_overrides=overrides
    ) as harness:
        histories = await _scenario(harness)
    record_new_histories(HISTORIES, histories, text=lambda h: _scrubbed(h.to_json()))
    for history in histories.values():
        await replayer(client).replay_workflow(history)


@pytest.mark.parametrize("name", NAMES)
async def test_recorded_delivery_histories_replay(name: str, client: Client) -> None:
    path = HISTORIES / f"{name}.json"
    assert path.exists(), f"record it with PERSYN_RECORD_HISTORIES=1 ({path.name})"
    history = WorkflowHistory.from_json(f"{name}-recorded", path.read_text())
    await replayer(client).replay_workflow(history)
