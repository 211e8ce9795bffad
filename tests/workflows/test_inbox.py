"""The agent's inbox: idempotency, fire-and-forget delivery, the lock, continue-as-new."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from sqlmodel import col, func, select
from temporalio.api.enums.v1 import EventType
from temporalio.client import Client
from temporalio.service import RPCError, RPCStatusCode

from activities.gateway.providers.scripted import ScriptRule
from contract import names
from contract.policies import ACTIVATION_TASK_TIMEOUT
from schemas.agents import AgentStatus, AgentStatusQuery, AgentWorkflowInput
from schemas.events import Outcome
from schemas.runs import HISTORY_LIMIT
from store.tables import DialogTurnRow, OutboxRow
from temporal import inbox
from tests.harness import Harness, Stack, event, replayer, running_worker, terminal, until
from workers.replay import load_history
from workflows import run_length

HISTORIES = Path(__file__).parent.parent / "histories"


async def _count(harness: Harness, table: type, **where: object) -> int:
    async with harness.db.session() as session:
        stmt = select(func.count()).select_from(table)
        for key, value in where.items():
            stmt = stmt.where(getattr(table, key) == value)
        return int((await session.exec(stmt)).one())


async def test_a_duplicate_event_gets_the_same_receipt_and_one_reply(harness: Harness) -> None:
    agent = await harness.create_agent()
    ev = event("only once, please")

    first = await harness.send(agent.handle, ev)
    second = await harness.send(agent.handle, ev)

    assert second == first
    assert await _count(harness, OutboxRow, agent=agent.handle) == 1
    assert await _count(harness, DialogTurnRow, agent=agent.handle, role="agent") == 1


async def test_concurrent_duplicates_are_answered_once(harness: Harness) -> None:
    agent = await harness.create_agent()
    ev = event("say it once")

    receipts = await asyncio.gather(*(harness.send(agent.handle, ev) for _ in range(4)))

    assert all(r == receipts[0] for r in receipts)
    assert await _count(harness, OutboxRow, agent=agent.handle) == 1


async def test_deliver_is_fire_and_forget_and_the_marker_can_be_polled(harness: Harness) -> None:
    agent = await harness.create_agent()
    ev = event("no need to wait")

    await inbox.deliver(
        harness.client, handle=agent.handle, event=ev, task_queue=harness.task_queue
    )
    handle = harness.client.get_workflow_handle(names.agent_workflow_id(agent.handle))
    # Wait on the workflow's own state, not a clock: the marker appears when it is done.
    for _ in range(400):
        answer = await inbox.marker(harness.client, handle=agent.handle, event_id=ev.event_id)
        if answer.marker is not None:
            break
        await asyncio.sleep(0.025)
    assert answer.marker is not None
    assert answer.marker.outcome is Outcome.SPOKE
    assert answer.marker.text == "no need to wait"
    status = await handle.query(names.STATUS, AgentStatusQuery(), result_type=AgentStatus)
    assert status.handled == 1


async def test_unaddressed_traffic_is_observed_in_silence_with_a_reason(harness: Harness) -> None:
    agent = await harness.create_agent()

    receipt = await harness.say(agent.handle, "chatting among ourselves", addressed=False)

    assert receipt.marker is not None
    assert receipt.marker.outcome is Outcome.SILENT
    assert receipt.marker.reason and "not addressed" in receipt.marker.reason
    assert receipt.marker.text is None
    assert await _count(harness, OutboxRow, agent=agent.handle) == 0
    # The observed message is still part of the dialog.
    assert await _count(harness, DialogTurnRow, agent=agent.handle, role="person") == 1


async def test_one_agent_handles_one_event_at_a_time(client: Client, stack: Stack) -> None:
    rules = [ScriptRule(delay_ms=150, reply="done: {last}")]
    async with running_worker(client, stack, rules=rules) as harness:
        agent = await harness.create_agent()
        receipts = await asyncio.gather(
            *(harness.say(agent.handle, f"message {i}", speaker=f"p{i}") for i in range(4))
        )
        async with harness.db.session() as session:
            rows = (
                await session.exec(
                    select(DialogTurnRow)
                    .where(DialogTurnRow.agent == agent.handle)
                    .order_by(col(DialogTurnRow.at))
                )
            ).all()
    assert all(r.marker and r.marker.outcome is Outcome.SPOKE for r in receipts)
    # In the order the conversation recorded them, strictly alternating: every input is
    # answered before the next input is taken in.
    roles = [row.role for row in rows]
    assert roles == ["person", "agent"] * 4
    for person, reply in zip(rows[::2], rows[1::2], strict=True):
        assert reply.text.startswith("done: ") and reply.text.endswith(person.text)


async def test_different_agents_run_in_parallel(client: Client, stack: Stack) -> None:
    # Each call waits (up to 30 s) until three calls are in progress: only agents whose
    # activations run in parallel can get there.
    rules = [ScriptRule(rendezvous=3, reply="ok")]
    async with running_worker(client, stack, rules=rules) as harness:
        agents = [await harness.create_agent() for _ in range(3)]
        receipts = await asyncio.gather(*(harness.say(a.handle, "go") for a in agents))
    assert all(r.marker and r.marker.outcome is Outcome.SPOKE for r in receipts)
    assert harness.provider.peak == 3


async def test_two_workflow_task_slots_still_run_agents_in_parallel(
    client: Client, stack: Stack
) -> None:
    # The worker's cap counts workflow tasks, not the model calls they wait on: three agents
    # still reach their model at once through two slots.
    rules = [ScriptRule(rendezvous=3, reply="ok")]
    overrides: dict[str, object] = {"worker_workflow_tasks": 2}
    async with running_worker(client, stack, rules=rules, settings_overrides=overrides) as harness:
        assert harness.worker.config()["max_concurrent_workflow_tasks"] == 2
        agents = [await harness.create_agent() for _ in range(3)]
        receipts = await asyncio.gather(*(harness.say(a.handle, "go") for a in agents))
    assert all(r.marker and r.marker.outcome is Outcome.SPOKE for r in receipts)
    assert harness.provider.peak == 3


async def test_the_agent_continues_as_new_and_keeps_its_state(harness: Harness) -> None:
    agent = await harness.create_agent()
    await harness.client.start_workflow(
        "AgentWorkflow",
        AgentWorkflowInput(handle=agent.handle, continue_as_new_after=2),
        id=names.agent_workflow_id(agent.handle),
        task_queue=harness.task_queue,
    )
    handle = harness.client.get_workflow_handle(names.agent_workflow_id(agent.handle))
    first_run = (await handle.describe()).run_id

    receipts = [await harness.say(agent.handle, f"turn {i}") for i in range(3)]
    repeat = await harness.send(agent.handle, event("turn 0", event_id=receipts[0].event_id))

    assert (await handle.describe()).run_id != first_run
    status = await handle.query(names.STATUS, AgentStatusQuery(), result_type=AgentStatus)
    assert status.handled == 3
    # The conversation and the markers survived the new run.
    assert {r.marker.conversation_id for r in receipts if r.marker} == {
        c.conversation_id for c in status.open_conversations
    }
    assert repeat == receipts[0]
    assert await _count(harness, OutboxRow, agent=agent.handle) == 3


async def test_the_agent_continues_as_new_at_its_history_limit(harness: Harness) -> None:
    agent = await harness.create_agent()
    handle = await harness.client.start_workflow(
        "AgentWorkflow",
        AgentWorkflowInput(handle=agent.handle, history_limit=100),
        id=names.agent_workflow_id(agent.handle),
        task_queue=harness.task_queue,
    )
    first_run = harness.client.get_workflow_handle(handle.id, run_id=handle.result_run_id)

    # Enough for the conversation too, which records fewer events per message than the agent.
    messages = 24
    for i in range(messages):
        await harness.say(agent.handle, f"turn {i}")
    history = await first_run.fetch_history()

    # The run went on until its history reached the limit, and no further than the message
    # that crossed it: well short of the thousands at which Temporal would suggest it.
    assert history.events[-1].event_type == EventType.EVENT_TYPE_WORKFLOW_EXECUTION_CONTINUED_AS_NEW
    assert 100 <= len(history.events) < 200
    status = await handle.query(names.STATUS, AgentStatusQuery(), result_type=AgentStatus)
    assert status.handled == messages
    await replayer(harness.client).replay_workflow(history)  # raises if it does not replay
    # Its conversation, open throughout, took the agent's limit and continued as well.
    (conversation,) = status.open_conversations
    talk = harness.client.get_workflow_handle(
        names.conversation_workflow_id(conversation.conversation_id)
    )
    started = (await talk.fetch_history()).events[0].workflow_execution_started_event_attributes
    assert started.continued_execution_run_id  # the current run continued an earlier one
    earlier = harness.client.get_workflow_handle(talk.id, run_id=started.continued_execution_run_id)
    talk_history = await earlier.fetch_history()
    assert (
        talk_history.events[-1].event_type
        == EventType.EVENT_TYPE_WORKFLOW_EXECUTION_CONTINUED_AS_NEW
    )
    assert 100 <= len(talk_history.events) < 200
    await replayer(harness.client).replay_workflow(talk_history)


async def test_an_input_without_a_history_limit_takes_the_default(harness: Harness) -> None:
    # A client starting the run by hand may omit the limit: the run takes today's default,
    # and records that it did, so that a run recorded under the old default replays with it.
    agent = await harness.create_agent()
    handle = await harness.client.start_workflow(
        "AgentWorkflow",
        {"handle": agent.handle},
        id=names.agent_workflow_id(agent.handle),
        task_queue=harness.task_queue,
    )
    receipt = await harness.say(agent.handle, "hello")
    assert receipt.marker is not None and receipt.marker.conversation_id is not None
    history = await handle.fetch_history()
    markers = [
        e.SerializeToString()
        for e in history.events
        if e.event_type == EventType.EVENT_TYPE_MARKER_RECORDED
    ]
    assert any(run_length.PATCH_HISTORY_250.encode() in m for m in markers)
    talk = harness.client.get_workflow_handle(
        names.conversation_workflow_id(receipt.marker.conversation_id)
    )
    started = (await talk.fetch_history()).events[0].workflow_execution_started_event_attributes
    (payload,) = started.input.payloads
    assert json.loads(payload.data)["history_limit"] == HISTORY_LIMIT == 250
    await replayer(harness.client).replay_workflow(history)


async def test_a_hand_started_run_recorded_under_the_500_event_default_replays_with_it(
    harness: Harness,
) -> None:
    # Recorded under `history-limit-500`: a run started with no limit in its input, 301 events
    # long and not continued. Replayed with today's 250-event default it would continue as
    # new at 250, a command its history does not hold.
    history = load_history(HISTORIES / "agent_hand_started_500.json")
    assert 250 < len(history.events) < 500
    marked = [e.SerializeToString() for e in history.events]
    assert any(run_length.PATCH_HISTORY_500.encode() in m for m in marked)
    assert not any(run_length.PATCH_HISTORY_250.encode() in m for m in marked)
    await replayer(harness.client).replay_workflow(history)


async def test_persyns_own_inputs_name_their_history_limit(harness: Harness) -> None:
    agent = await harness.create_agent()
    await harness.say(agent.handle, "hello")
    history = await harness.client.get_workflow_handle(
        names.agent_workflow_id(agent.handle)
    ).fetch_history()
    started = history.events[0].workflow_execution_started_event_attributes
    (payload,) = started.input.payloads
    assert json.loads(payload.data)["history_limit"] == HISTORY_LIMIT
    # Named, the limit needs no default: the default's patch is never consulted.
    assert not any(
        patch.encode() in e.SerializeToString()
        for e in history.events
        for patch in (run_length.PATCH_HISTORY_500, run_length.PATCH_HISTORY_250)
        if e.event_type == EventType.EVENT_TYPE_MARKER_RECORDED
    )


async def test_channels_get_separate_conversations(harness: Harness) -> None:
    agent = await harness.create_agent()
    a = await harness.say(agent.handle, "on the console", channel=terminal("console"))
    b = await harness.say(agent.handle, "on another tty", channel=terminal("tty2"))
    c = await harness.say(agent.handle, "console again", channel=terminal("console"))
    assert a.marker and b.marker and c.marker
    assert a.marker.conversation_id == c.marker.conversation_id
    assert a.marker.conversation_id != b.marker.conversation_id


@pytest.mark.parametrize("explicit", ["open", "unknown"])
async def test_an_explicit_conversation_id_must_be_open(harness: Harness, explicit: str) -> None:
    agent = await harness.create_agent()
    first = await harness.say(agent.handle, "start")
    assert first.marker is not None
    conversation = (
        first.marker.conversation_id if explicit == "open" else "01ARZ3NDEKTSV4RRFFQ69G5FAV"
    )
    ev = event("continue").model_copy(update={"conversation_id": conversation})
    receipt = await harness.send(agent.handle, ev)
    assert receipt.marker is not None
    if explicit == "open":
        assert receipt.marker.outcome is Outcome.SPOKE
        assert receipt.marker.conversation_id == conversation
    else:
        assert receipt.marker.outcome is Outcome.FAILED
        assert "not open" in (receipt.marker.reason or "")


async def test_an_unknown_agent_is_refused_with_a_clear_message(harness: Harness) -> None:
    with pytest.raises(inbox.SubmitRejectedError) as caught:
        await harness.say("nobody-here", "hello?")
    assert "there is no agent 'nobody-here'" in str(caught.value)
    # The run update-with-start had to start for it is deleted: nothing is left behind.
    ghost = harness.client.get_workflow_handle(names.agent_workflow_id("nobody-here"))

    async def gone() -> bool:
        try:
            await ghost.describe()
        except RPCError as err:
            return err.status == RPCStatusCode.NOT_FOUND
        return False

    await until(gone)


async def test_an_activation_runs_with_the_short_task_timeout(harness: Harness) -> None:
    # A killed worker's started task comes back after the task timeout: an activation's, the
    # step a message is most often in, after 5 s; the long-lived runs keep the default 10 s.
    agent = await harness.create_agent()
    receipt = await harness.say(agent.handle, "hello")
    assert receipt.marker is not None and receipt.marker.activation_id is not None
    assert receipt.marker.conversation_id is not None

    async def task_timeout(workflow_id: str) -> float:
        described = await harness.client.get_workflow_handle(workflow_id).describe()
        config = described.raw_description.execution_config
        return config.default_workflow_task_timeout.ToTimedelta().total_seconds()

    activation = names.activation_workflow_id(receipt.marker.activation_id)
    assert await task_timeout(activation) == ACTIVATION_TASK_TIMEOUT.total_seconds() == 5
    conversation = names.conversation_workflow_id(receipt.marker.conversation_id)
    assert await task_timeout(conversation) == 10
