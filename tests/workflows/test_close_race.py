"""A conversation's close crossing the agent's routing signal, made to happen on every run.

When a conversation idles out (or is told to end) while its agent routes a new input to it, the
conversation ignores the input (it is closing) and the agent hears ``conversation_closed``.
The two messages cross in one of two orders, and each must end with the input answered once,
by a fresh conversation:

- the close reaches the agent before the agent's signal is delivered (``_dispatch`` sees the
  conversation among the closed ones: behind the ``closed-while-routing`` patch);
- the close reaches the agent after the input went in flight (``conversation_closed`` puts it
  back at the head of the queue).

Real agent, conversations and activations on the dev server; gates on two activities decide
which message arrives first (tests/workflows/gates.py).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import pytest
from sqlmodel import col, select
from temporalio.client import Client

from contract import names
from schemas.agents import AgentStatus, AgentStatusQuery
from schemas.events import InboundEvent, Outcome, Receipt
from schemas.guardrails import EndConversationRequest
from store.tables import ActivationRow, DialogTurnRow
from tests.harness import Harness, Stack, event, replayer, until
from tests.workflows.gates import (
    Gates,
    gated_worker,
    history,
    signals_delivered,
    signals_received,
)

ANSWER_WITHIN_S = 60.0
"""Far below the agent's 20-minute activation deadline: an input stuck in flight fails here."""


@pytest.fixture
def gates() -> Gates:
    return Gates()


@pytest.fixture
async def harness(client: Client, stack: Stack, gates: Gates) -> AsyncIterator[Harness]:
    async with gated_worker(client, stack, gates) as running:
        yield running


async def _open_conversation(harness: Harness, handle: str) -> str:
    """The ID of the conversation that answered a first message on the terminal."""
    receipt = await harness.say(handle, "hello")
    assert receipt.marker is not None and receipt.marker.conversation_id is not None
    return receipt.marker.conversation_id


async def _end(client: Client, conversation_id: str) -> None:
    await client.get_workflow_handle(names.conversation_workflow_id(conversation_id)).signal(
        names.END_CONVERSATION, EndConversationRequest(reason="the test closes it")
    )


async def _received(client: Client, conversation_id: str, signal: str, mentioning: str) -> bool:
    events = await history(client, names.conversation_workflow_id(conversation_id))
    return bool(signals_received(events, signal, mentioning))


async def _told_agent(client: Client, conversation_id: str, handle: str) -> bool:
    """The conversation's ``conversation_closed`` was delivered to its agent."""
    events = await history(client, names.conversation_workflow_id(conversation_id))
    return bool(
        signals_delivered(events, names.CONVERSATION_CLOSED, names.agent_workflow_id(handle))
    )


async def _in_flight_is(client: Client, handle: str, event_id: str) -> bool:
    status: AgentStatus = await client.get_workflow_handle(names.agent_workflow_id(handle)).query(
        names.STATUS, AgentStatusQuery(), result_type=AgentStatus
    )
    return status.in_flight_event == event_id


async def _order_at_agent(client: Client, handle: str, conversation_id: str) -> tuple[int, int]:
    """Where the agent heard the close, and where its input signal to the conversation landed."""
    events = await history(client, names.agent_workflow_id(handle))
    closed = signals_received(events, names.CONVERSATION_CLOSED, conversation_id)
    routed = signals_delivered(
        events, names.INBOUND, names.conversation_workflow_id(conversation_id)
    )
    assert len(closed) == 1 and len(routed) == 1, (closed, routed)
    return closed[0], routed[0]


async def _replays(client: Client, handle: str) -> None:
    """The agent's history, with the input routed twice, replays deterministically."""
    found = await client.get_workflow_handle(names.agent_workflow_id(handle)).fetch_history()
    await replayer(client).replay_workflow(found)


async def _answered_once(
    harness: Harness, receipt: Receipt, sent: InboundEvent, closed: str
) -> None:
    """One spoken answer, from a fresh conversation; the input and the reply stored once."""
    marker = receipt.marker
    assert marker is not None
    assert marker.outcome is Outcome.SPOKE
    assert marker.text == f"ack: {sent.text}"
    assert marker.conversation_id is not None and marker.conversation_id != closed
    async with harness.db.session() as session:
        said: Any = await session.exec(
            select(DialogTurnRow.conversation_id).where(DialogTurnRow.id == sent.event_id)
        )
        assert said.all() == [marker.conversation_id]
        replies: Any = await session.exec(
            select(DialogTurnRow.conversation_id).where(
                DialogTurnRow.agent == receipt.agent,
                DialogTurnRow.role == "agent",
                DialogTurnRow.text == marker.text,
            )
        )
        assert replies.all() == [marker.conversation_id]
        runs: Any = await session.exec(
            select(ActivationRow.id).where(col(ActivationRow.event_id) == sent.event_id)
        )
        assert runs.all() == [marker.activation_id]


async def test_a_close_that_reaches_the_agent_before_its_routing_signal_lands(
    client: Client, harness: Harness, gates: Gates
) -> None:
    agent = await harness.create_agent()
    first = await _open_conversation(harness, agent.handle)

    # The agent's workflow task stays open while it resolves the speaker: a close arriving
    # then is buffered, and the agent signals a conversation it still believes open.
    routing = gates.hold(
        lambda info, args: (
            info.activity_type == "store.resolve_speaker"
            and info.workflow_id == names.agent_workflow_id(agent.handle)
            and args[0].speaker.speaker_id == "bob"
        )
    )
    # The closing conversation's consolidation keeps it running after it said it closed, so
    # the agent's signal reaches it (and is ignored) instead of failing as undeliverable.
    consolidating = gates.hold(
        lambda info, args: info.workflow_type == names.CONSOLIDATION_WORKFLOW
    )
    second = event("are you still there?", speaker="bob")
    submission = asyncio.create_task(harness.send(agent.handle, second))
    await asyncio.wait_for(routing.entered.wait(), ANSWER_WITHIN_S)

    await _end(client, first)
    await until(lambda: _told_agent(client, first, agent.handle))
    routing.open()
    await until(lambda: _received(client, first, names.INBOUND, second.event_id))
    consolidating.open()
    receipt = await asyncio.wait_for(submission, ANSWER_WITHIN_S)

    closed_at, routed_at = await _order_at_agent(client, agent.handle, first)
    assert closed_at < routed_at, "the close was meant to reach the agent first"
    await _answered_once(harness, receipt, second, closed=first)
    await _replays(client, agent.handle)


async def test_a_close_that_reaches_the_agent_while_the_input_is_in_flight(
    client: Client, harness: Harness, gates: Gates
) -> None:
    agent = await harness.create_agent()
    first = await _open_conversation(harness, agent.handle)

    # The conversation has begun closing (it ignores inputs from now on) but has not yet told
    # the agent: recording the close is held.
    recording_close = gates.hold(
        lambda info, args: (
            info.activity_type == "store.close_conversation"
            and info.workflow_id == names.conversation_workflow_id(first)
        )
    )
    await _end(client, first)
    await asyncio.wait_for(recording_close.entered.wait(), ANSWER_WITHIN_S)

    second = event("are you still there?", speaker="bob")
    submission = asyncio.create_task(harness.send(agent.handle, second))
    # In flight on the closing conversation: the agent's signal was delivered to it.
    await until(lambda: _in_flight_is(client, agent.handle, second.event_id))
    recording_close.open()
    receipt = await asyncio.wait_for(submission, ANSWER_WITHIN_S)

    closed_at, routed_at = await _order_at_agent(client, agent.handle, first)
    assert routed_at < closed_at, "the input was meant to be in flight when the close came"
    assert await _received(client, first, names.INBOUND, second.event_id)
    await _answered_once(harness, receipt, second, closed=first)
    await _replays(client, agent.handle)
