"""A conversation's close crossing the agent's admission of a turn, made to happen on every run.

When a conversation idles out (or is told to end) while its agent admits a new input to it,
the conversation's row decides (``store.queries.admission``): whichever takes its lock first
wins, and either way the input is answered once:

- the close takes the row first: admission finds it closed and admits the turn to a fresh
  conversation;
- the admission takes the row first: the close is refused while the conversation has not heard
  of the turn; it hears, the exchange ends, and then the conversation closes.

Runs recorded before admission raced the routing signal instead; their histories replay
(tests/workflows/test_replay.py).

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
from store.tables import ActivationRow, Conversation, DialogTurnRow
from tests.harness import Harness, Stack, event, replayer, until
from tests.workflows.gates import (
    Gates,
    gated_worker,
    history,
    signals_delivered,
    signals_received,
)

ANSWER_WITHIN_S = 60.0
"""Far below the activation's 18-minute run timeout: an input stuck in flight fails here."""


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


async def _admitted_to(harness: Harness, event_id: str) -> list[str]:
    async with harness.db.session() as session:
        said: Any = await session.exec(
            select(DialogTurnRow.conversation_id).where(DialogTurnRow.id == event_id)
        )
        return list(said.all())


async def test_a_close_that_takes_the_row_first_sends_the_turn_to_a_fresh_conversation(
    client: Client, harness: Harness, gates: Gates
) -> None:
    agent = await harness.create_agent()
    first = await _open_conversation(harness, agent.handle)

    # The agent's workflow task stays open while it admits the event: the conversation
    # closes meanwhile (recorded and told), and the agent still believes it open.
    admitting = gates.hold(
        lambda info, args: (
            info.activity_type == "admission.admit"
            and info.workflow_id == names.agent_workflow_id(agent.handle)
            and args[0].event.speaker.speaker_id == "bob"
        )
    )
    second = event("are you still there?", speaker="bob")
    submission = asyncio.create_task(harness.send(agent.handle, second))
    await asyncio.wait_for(admitting.entered.wait(), ANSWER_WITHIN_S)

    await _end(client, first)
    await until(lambda: _told_agent(client, first, agent.handle))
    admitting.open()
    receipt = await asyncio.wait_for(submission, ANSWER_WITHIN_S)

    # Refused by the closed row, the turn went to a fresh conversation, once.
    await _answered_once(harness, receipt, second, closed=first)
    await _replays(client, agent.handle)


async def test_a_turn_admitted_first_refuses_the_close_and_is_answered_where_it_was_said(
    client: Client, harness: Harness, gates: Gates
) -> None:
    agent = await harness.create_agent()
    first = await _open_conversation(harness, agent.handle)

    # The conversation has begun closing (asked to end) but its close has not yet taken the
    # row: recording the close is held while the agent admits a turn to it.
    recording_close = gates.hold(
        lambda info, args: (
            info.activity_type == "admission.close"
            and info.workflow_id == names.conversation_workflow_id(first)
        )
    )
    await _end(client, first)
    await asyncio.wait_for(recording_close.entered.wait(), ANSWER_WITHIN_S)

    second = event("are you still there?", speaker="bob")
    submission = asyncio.create_task(harness.send(agent.handle, second))
    await until(lambda: _admitted_to_async(harness, second.event_id, first))
    recording_close.open()
    receipt = await asyncio.wait_for(submission, ANSWER_WITHIN_S)

    marker = receipt.marker
    assert marker is not None and marker.outcome is Outcome.SPOKE
    assert marker.conversation_id == first, "answered in the conversation it was admitted to"
    assert await _admitted_to(harness, second.event_id) == [first]
    # It heard of the turn with the exchange's end, from the activation.
    assert await _received(client, first, names.EXCHANGE_DONE, second.event_id)
    assert not await _received(client, first, names.TURN_TAKEN, second.event_id)
    # The refused close was tried again once the exchange ended, and then the conversation
    # closed (it had been asked to end), telling the agent.
    await until(lambda: _told_agent(client, first, agent.handle))
    async with harness.db.session() as session:
        row = await session.get(Conversation, first)
        assert row is not None and row.status == "closed" and row.turns == 4
    await _replays(client, agent.handle)
    found = await client.get_workflow_handle(names.conversation_workflow_id(first)).fetch_history()
    await replayer(client).replay_workflow(found)


async def _admitted_to_async(harness: Harness, event_id: str, conversation_id: str) -> bool:
    return await _admitted_to(harness, event_id) == [conversation_id]
