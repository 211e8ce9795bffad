"""A live call holds its agent's lock for the whole call (docs/channels.md, "Live voice").

On the real stack: a typed message sent during a call waits for the hang-up and is answered
once, while the call's own background runs go on; a call that goes idle, or whose workflow is
terminated, gives the lock back; the hold survives continue-as-new; the recorded histories of
a held call replay.

PERSYN_RECORD_HISTORIES=1 (with PERSYN_CODEC_ENABLED=false) records a history that has no file
yet; recorded ones are kept, never rewritten.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from temporalio.api.enums.v1 import EventType
from temporalio.client import Client, WorkflowHandle, WorkflowHistory
from temporalio.testing import WorkflowEnvironment

from activities.gateway.providers.scripted import Script, ScriptedProvider, ScriptRule
from contract import names
from schemas.agents import AgentStatus, AgentWorkflowInput
from schemas.events import ChannelRef, InboundEvent, Outcome, Receipt, Speaker
from schemas.models import ProviderName
from schemas.voice import CallDirection, CallState, HangUp, StartCallInput, call_channel
from temporal import inbox
from tests.cli_calls import aimed_at, ok, refused
from tests.harness import (
    Harness,
    Stack,
    close_dependencies,
    dependencies,
    event,
    record_new_histories,
    replayer,
    unique,
    until,
)
from tests.voice.calls import Line, dialog, known_person, say, turn
from usecases.inboxes import current_details
from workers.build import build_worker

HISTORIES = Path(__file__).parent / "histories"
AGENT_HISTORY = "agent_call_hold"
CALL_HISTORY = "call_hold"
TYPED = ChannelRef(service="web", channel="support")
FAST = [ScriptRule(task="voice", reply="Spoken: {last}")]


def agent_of(client: Client, handle: str) -> WorkflowHandle[Any, Any]:
    return client.get_workflow_handle(names.agent_workflow_id(handle))


async def status(client: Client, handle: str) -> AgentStatus:
    answer: AgentStatus = await agent_of(client, handle).query(
        names.STATUS, result_type=AgentStatus
    )
    return answer


async def held_by(client: Client, handle: str, call_id: str) -> bool:
    now = await status(client, handle)
    return now.call is not None and now.call.call.call_id == call_id and now.call.since is not None


async def test_a_typed_message_during_a_call_waits_for_the_hang_up_and_is_answered_once(
    line: Line, worker: Harness, client: Client
) -> None:
    agent = (await worker.create_agent()).handle
    await known_person(worker.db, agent, "+15550001", "Grace")
    call = unique("call")
    assert (await say(line, turn(agent, call, "Hello there")))[0] == 200
    await line.runtime.drain()
    await until(lambda: held_by(client, agent, call))
    held = await status(client, agent)
    assert held.call is not None and held.calls_waiting == 0
    assert held.call.channel_key == call_channel(line.record.tenant, call).key

    typed = event("Are you there?", channel=TYPED)
    waiting = asyncio.create_task(worker.send(agent, typed))
    await until(lambda: _queued(client, agent, 1))
    details = await current_details(agent_of(client, agent))
    assert details is not None and f"on a call with Grace (call {call})" in details

    # The call's own turn runs the whole pipeline at once, past the message that waits.
    assert (await say(line, turn(agent, call, "Hello there", "Hi", "What now")))[0] == 200
    await line.runtime.drain()
    person = [r.text for r in await dialog(worker, agent) if r.role == "person"]
    assert person[-1] == "What now" and "Are you there?" not in person
    assert not waiting.done()
    assert (await status(client, agent)).queued == 1

    call_handle = client.get_workflow_handle(names.call_workflow_id(call), result_type=CallState)
    await call_handle.signal(names.HANG_UP, HangUp(reason="customer-ended-call"))
    ended = await call_handle.result()
    receipt = await asyncio.wait_for(waiting, 60)
    assert ended.ended == "customer-ended-call"
    assert receipt.marker is not None and receipt.marker.outcome is Outcome.SPOKE
    assert receipt.marker.text == "BACKGROUND-SAID Are you there?"
    # Answered once: the same event again is the same receipt, and one reply was written.
    again = await worker.send(agent, typed)
    assert again.marker == receipt.marker
    replies = [r for r in await dialog(worker, agent) if r.text == receipt.marker.text]
    assert len(replies) == 1
    after = await status(client, agent)
    assert (after.call, after.queued) == (None, 0)

    histories = {
        AGENT_HISTORY: await agent_of(client, agent).fetch_history(),
        CALL_HISTORY: await call_handle.fetch_history(),
    }
    record_new_histories(HISTORIES, histories)
    for history in histories.values():
        await replayer(client).replay_workflow(history)


async def _queued(client: Client, handle: str, count: int) -> bool:
    return (await status(client, handle)).queued == count


def _call(agent: str, *, idle_timeout_s: float = 600, tenant: str = "t") -> StartCallInput:
    return StartCallInput(
        call_id=unique("call"),
        agent=agent,
        direction=CallDirection.INBOUND,
        tenant=tenant,
        person_name="Grace",
        idle_timeout_s=idle_timeout_s,
    )


async def _start_call(client: Client, task_queue: str, start: StartCallInput) -> None:
    await client.start_workflow(
        names.CALL_WORKFLOW,
        start,
        id=names.call_workflow_id(start.call_id),
        task_queue=task_queue,
    )


async def test_a_call_that_goes_idle_gives_the_lock_back(worker: Harness, client: Client) -> None:
    agent = (await worker.create_agent()).handle
    first = await worker.say(agent, "hello", channel=TYPED)
    assert first.marker is not None
    start = _call(agent, idle_timeout_s=3)
    await _start_call(client, worker.task_queue, start)
    await until(lambda: held_by(client, agent, start.call_id))
    # Nothing is said on the call: it ends idle, and the message that waited is answered.
    receipt = await asyncio.wait_for(worker.say(agent, "still there?", channel=TYPED), 60)
    assert receipt.marker is not None and receipt.marker.text == "BACKGROUND-SAID still there?"
    ended: CallState = await client.get_workflow_handle(
        names.call_workflow_id(start.call_id), result_type=CallState
    ).result()
    assert ended.ended == "idle"
    assert (await status(client, agent)).call is None


async def _held_while_one_waits(
    worker: Harness, client: Client, text: str
) -> tuple[str, StartCallInput, asyncio.Task[Receipt]]:
    """An agent on a call with Grace, and a typed message ``text`` waiting for it to end."""
    agent = (await worker.create_agent()).handle
    assert (await worker.say(agent, "hello", channel=TYPED)).marker is not None
    start = _call(agent)
    await _start_call(client, worker.task_queue, start)
    await until(lambda: held_by(client, agent, start.call_id))
    waiting = asyncio.create_task(worker.say(agent, text, channel=TYPED))
    await until(lambda: _queued(client, agent, 1))
    return agent, start, waiting


async def test_a_cancelled_call_gives_the_lock_back(worker: Harness, client: Client) -> None:
    agent, start, waiting = await _held_while_one_waits(worker, client, "are you off the phone?")
    await client.get_workflow_handle(names.call_workflow_id(start.call_id)).cancel()
    receipt = await asyncio.wait_for(waiting, 60)
    assert receipt.marker is not None
    assert receipt.marker.text == "BACKGROUND-SAID are you off the phone?"
    assert (await status(client, agent)).call is None


async def test_the_hold_and_the_messages_waiting_for_it_survive_continue_as_new(
    worker: Harness, client: Client
) -> None:
    # Every wait here is an update's or a history's, never a query's: a query that reaches an
    # agent's run while its first workflow task runs the agent's lookup (a local activity) can
    # leave the run's first patch marker in a later task, and that history does not replay.
    agent = (await worker.create_agent()).handle
    await client.start_workflow(
        names.AGENT_WORKFLOW,
        AgentWorkflowInput(handle=agent, continue_as_new_after=2),
        id=names.agent_workflow_id(agent),
        task_queue=worker.task_queue,
    )
    first_run = (await agent_of(client, agent).describe()).run_id
    start = _call(agent)
    await _start_call(client, worker.task_queue, start)
    await until(lambda: _agent_told(client, start.call_id))
    typed = event("after the call", channel=TYPED)
    await inbox.deliver(client, handle=agent, event=typed, task_queue=worker.task_queue)
    channel = call_channel(start.tenant, start.call_id)
    # Two of the call's turns end the run's quota; it continues as new with the hold and the
    # message waiting for it, and the third turn is dispatched by the new run.
    for said in ("first words", "second words", "third words"):
        receipt = await worker.send(agent, _call_turn(channel, said))
        assert receipt.marker is not None and receipt.marker.text == f"BACKGROUND-SAID {said}"
    assert (await agent_of(client, agent).describe()).run_id != first_run
    now = await status(client, agent)
    assert now.call is not None and now.call.call.call_id == start.call_id
    assert now.call.since is not None and now.queued == 1

    await client.get_workflow_handle(names.call_workflow_id(start.call_id)).signal(
        names.HANG_UP, HangUp()
    )
    # The same event again waits for the first one's marker (it is not queued twice).
    answer = await asyncio.wait_for(worker.send(agent, typed), 60)
    assert answer.marker is not None and answer.marker.text == "BACKGROUND-SAID after the call"


def _call_turn(channel: ChannelRef, said: str) -> InboundEvent:
    return InboundEvent(
        event_id=event(said).event_id,
        channel=channel,
        speaker=Speaker(speaker_id="+15550001"),
        text=said,
    )


async def _agent_told(client: Client, call_id: str) -> bool:
    """Whether the call's workflow has told its agent ``call_began`` (read from its history)."""
    history = await client.get_workflow_handle(names.call_workflow_id(call_id)).fetch_history()
    return any(
        e.event_type == EventType.EVENT_TYPE_EXTERNAL_WORKFLOW_EXECUTION_SIGNALED
        for e in history.events
    )


async def _answered(client: Client, handle: str, event_id: str) -> bool:
    return (await inbox.marker(client, handle=handle, event_id=event_id)).marker is not None


async def test_a_terminated_call_loses_the_lock_once_silent_past_its_idle_time_and_grace(
    skipping: WorkflowEnvironment, stack: Stack
) -> None:
    provider = ScriptedProvider(Script(rules=[ScriptRule(task="respond", reply="SAID {last}")]))
    deps = dependencies(
        stack.settings(), providers={ProviderName.SCRIPTED: provider}, dsn=stack.dsn
    )
    queue = unique("tq")
    client = skipping.client
    async with build_worker(client, deps, task_queue=queue) as built:
        harness = Harness(client, queue, deps, provider, built, deps.db)
        agent = (await harness.create_agent()).handle
        first = await harness.say(agent, "hello", channel=TYPED)
        assert first.marker is not None
        start = _call(agent, idle_timeout_s=300)
        await _start_call(client, queue, start)
        await until(lambda: held_by(client, agent, start.call_id))
        typed = event("are you free?", channel=TYPED)
        await inbox.deliver(client, handle=agent, event=typed, task_queue=queue)
        await until(lambda: _queued(client, agent, 1))
        # Terminated, the call cannot say it ended.
        await client.get_workflow_handle(names.call_workflow_id(start.call_id)).terminate(
            reason="test"
        )
        await skipping.sleep(timedelta(seconds=300 + 60))
        still = await status(client, agent)
        assert still.call is not None and still.queued == 1
        await skipping.sleep(timedelta(seconds=90))  # past idle time and grace (120 s)
        await until(lambda: _answered(client, agent, typed.event_id))
        answer = await inbox.marker(client, handle=agent, event_id=typed.event_id)
        assert answer.marker is not None and answer.marker.text == "SAID are you free?"
        assert (await status(client, agent)).call is None
    await close_dependencies(deps)


async def test_the_recorded_histories_of_a_held_call_replay(client: Client) -> None:
    for name in (AGENT_HISTORY, CALL_HISTORY):
        path = HISTORIES / f"{name}.json"
        assert path.exists(), f"record it with PERSYN_RECORD_HISTORIES=1 ({path.name})"
        history = WorkflowHistory.from_json(f"{name}-recorded", path.read_text())
        await replayer(client).replay_workflow(history)


@pytest.fixture
def deployment(stack: Stack, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The CLI's settings name the test's stack."""
    with aimed_at(stack, monkeypatch):
        yield


async def test_an_operator_lists_the_calls_on_and_ends_one(
    worker: Harness, client: Client, deployment: None
) -> None:
    agent, start, waiting = await _held_while_one_waits(worker, client, "off the phone yet?")

    async def listed() -> bool:  # visibility lists a run shortly after it starts
        return start.call_id in await asyncio.to_thread(ok, "calls", "list", "--agent", agent)

    await until(listed)
    [line] = (await asyncio.to_thread(ok, "calls", "list", "--agent", agent)).splitlines()
    assert line.startswith(f"{start.call_id}  {agent}  from Grace  [since ")
    assert line.endswith("0 turns]")
    assert await asyncio.to_thread(ok, "calls", "list", "--agent", unique("agent")) == (
        "no call is on\n"
    )

    said = await asyncio.to_thread(ok, "calls", "end", start.call_id, "--by", "sam")
    assert said == (
        f"ended call {start.call_id} of {agent} (ended by sam); {agent} takes the next "
        "message now\n"
    )
    receipt = await asyncio.wait_for(waiting, 60)
    assert (
        receipt.marker is not None and receipt.marker.text == "BACKGROUND-SAID off the phone yet?"
    )
    ended: CallState = await client.get_workflow_handle(
        names.call_workflow_id(start.call_id), result_type=CallState
    ).result()
    assert ended.ended == "ended by sam"
    assert (await status(client, agent)).call is None

    # Ended, or never on, or no call ID at all: one line each, nothing sent.
    gone = await asyncio.to_thread(refused, "calls", "end", start.call_id)
    assert (
        gone
        == f"error: no call {start.call_id} is on: `persyn calls list` shows the calls that are"
    )
    bad = await asyncio.to_thread(refused, "calls", "end", "call id with spaces")
    assert bad.startswith("error: call ID 'call id with spaces': 1-128 letters")
    assert start.call_id not in await asyncio.to_thread(ok, "calls", "list")


async def test_a_terminated_call_is_not_on_for_an_operator(
    worker: Harness, client: Client, deployment: None
) -> None:
    agent = (await worker.create_agent()).handle
    assert (await worker.say(agent, "hello", channel=TYPED)).marker is not None
    start = _call(agent)
    await _start_call(client, worker.task_queue, start)
    await until(lambda: held_by(client, agent, start.call_id))
    # Terminated, the call never says it ended: its last state still reads as on.
    await client.get_workflow_handle(names.call_workflow_id(start.call_id)).terminate(reason="test")
    gone = await asyncio.to_thread(refused, "calls", "end", start.call_id)
    assert (
        gone
        == f"error: no call {start.call_id} is on: `persyn calls list` shows the calls that are"
    )
    assert start.call_id not in await asyncio.to_thread(ok, "calls", "list", "--agent", agent)
