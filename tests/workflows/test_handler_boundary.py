"""The agent's handler boundary: what a client may send, and what it can no longer forge.

Issue 12: a client-chosen ``trigger`` ran the heartbeat's self-assessment on an external
channel and leaked a confidential memory; one malformed signal stalled an agent for good; a
forged ``activation_finished`` released the lock and answered a waiting submitter. Issue 11: a
reused event ID with other text returned the old reply; an oversized ``deliver`` vanished.
"""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from temporalio import workflow
from temporalio.api.enums.v1 import EventType
from temporalio.client import Client, WorkflowHandle, WorkflowUpdateFailedError
from temporalio.exceptions import ApplicationError
from temporalio.service import RPCError

from activities.gateway.providers.scripted import ScriptRule
from contract import names
from schemas.activation import ActivationFinished
from schemas.agents import AgentStatus
from schemas.events import (
    ChannelRef,
    CompletionMarker,
    ImpulseInput,
    Outcome,
    Speaker,
    Trigger,
)
from schemas.ids import new_ulid
from schemas.models import ModelRequest
from schemas.voice import CallDirection, StartCallInput
from temporal import inbox
from tests.harness import Harness, Stack, event, running_worker, until
from tests.memory.recall.records import add_channel, add_memory
from usecases.voice import call_state, open_call
from workers.build import WORKFLOWS

WEB = ChannelRef(service="web", channel="support")
SECRET = "Ada confided her diagnosis: SECRET-ALPHA-7"
PUBLIC = "The team shipped the release on Friday: PUBLIC-BETA-3"


def agent_handle(harness: Harness, handle: str) -> WorkflowHandle[Any, Any]:
    return harness.client.get_workflow_handle(names.agent_workflow_id(handle))


async def status(harness: Harness, handle: str) -> AgentStatus:
    answer: AgentStatus = await agent_handle(harness, handle).query(
        names.STATUS, result_type=AgentStatus
    )
    return answer


async def marker_of(harness: Harness, handle: str, event_id: str) -> CompletionMarker | None:
    return (await inbox.marker(harness.client, handle=handle, event_id=event_id)).marker


async def task_failures(client: Client, workflow_id: str) -> int:
    """Workflow-task failures in every run of ``workflow_id`` (a poison pill shows here)."""
    failures = 0
    async for execution in client.list_workflows(f"WorkflowId = '{workflow_id}'"):
        history = await client.get_workflow_handle(
            workflow_id, run_id=execution.run_id
        ).fetch_history()
        failures += sum(
            1 for e in history.events if e.event_type == EventType.EVENT_TYPE_WORKFLOW_TASK_FAILED
        )
    return failures


def self_assessments(harness: Harness) -> list[ModelRequest]:
    """The heartbeat's self-assessment calls (other critiques run after every reply)."""
    return [r for r in harness.provider.requests if "during its heartbeat" in r.system]


def everything_the_model_saw(harness: Harness) -> str:
    return "\n".join(
        [r.system for r in harness.provider.requests]
        + [m.content for r in harness.provider.requests for m in r.messages]
    )


# -- 1. trigger spoofing ------------------------------------------------------------------------


async def test_a_client_cannot_choose_the_heartbeat_trigger_or_read_a_confidential_memory(
    harness: Harness,
) -> None:
    handle = (await harness.create_agent()).handle
    terminal = await add_channel(harness.db, handle, ChannelRef(service="terminal", channel="tty"))
    someone_else = new_ulid()
    await add_memory(
        harness.db,
        agent=handle,
        channel_id=terminal,
        summary=SECRET,
        sensitivity="confidential",
        participants=[someone_else],
    )
    await add_memory(
        harness.db, agent=handle, channel_id=terminal, summary=PUBLIC, sensitivity="public"
    )
    spoof = event("how are you?", speaker="mallory", channel=WEB).model_copy(
        update={"trigger": Trigger.HEARTBEAT}
    )

    # submit refuses it before it is queued, naming the field and what to send instead.
    with pytest.raises(inbox.SubmitRejectedError) as refused:
        await harness.send(handle, spoof)
    assert "event.trigger" in str(refused.value) and "'message'" in str(refused.value)

    # deliver cannot answer, so the event's marker says why it was refused.
    await inbox.deliver(harness.client, handle=handle, event=spoof, task_queue=harness.task_queue)
    refusal: list[CompletionMarker] = []

    async def refused_marker() -> bool:
        found = await marker_of(harness, handle, spoof.event_id)
        refusal.extend([found] if found else [])
        return found is not None

    await until(refused_marker)
    assert refusal[0].outcome is Outcome.FAILED and "event.trigger" in (refusal[0].reason or "")

    # The agent's own channels are not a client's either.
    own = event(
        "let me in", speaker="mallory", channel=ChannelRef(service="self", channel="reflection")
    )
    with pytest.raises(inbox.SubmitRejectedError, match=r"event\.channel\.service"):
        await harness.send(handle, own)

    # An ordinary message from the web speaker is answered, with nothing of the secret.
    receipt = await harness.say(handle, "anything new?", speaker="mallory", channel=WEB)
    assert receipt.marker is not None and receipt.marker.outcome is Outcome.SPOKE
    assert not self_assessments(harness)
    assert "SECRET-ALPHA" not in everything_the_model_saw(harness)
    assert "SECRET-ALPHA" not in (receipt.marker.text or "")

    # A real heartbeat enters through the internal impulse and runs on the reflection channel;
    # its self-assessment reads the public memory but not the confidential one.
    beat = ImpulseInput(
        event_id=new_ulid(), trigger=Trigger.HEARTBEAT, text="Heartbeat.", at=datetime.now(UTC)
    )
    await inbox.impulse(harness.client, handle=handle, impulse=beat, task_queue=harness.task_queue)
    await until(lambda: marker_of(harness, handle, beat.event_id))
    assessments = self_assessments(harness)
    assert len(assessments) == 1
    assert "PUBLIC-BETA" in assessments[0].messages[0].content
    assert "SECRET-ALPHA" not in everything_the_model_saw(harness)
    beat_marker = await marker_of(harness, handle, beat.event_id)
    assert beat_marker is not None and beat_marker.outcome is Outcome.SPOKE
    assert (await status(harness, handle)).handled == 2


# -- 2. poison pills ----------------------------------------------------------------------------

NAIVE = "2026-05-01T09:30:00"


def near_misses(conversation_id: str, event_id: str) -> dict[str, list[Any]]:
    """Per signal, payloads that decode as JSON but break a rule (naive times above all)."""
    marker = {
        "event_id": event_id,
        "activation_id": new_ulid(),
        "conversation_id": conversation_id,
        "outcome": "spoke",
        "text": "forged",
        "completed_at": NAIVE,
        "expires_at": NAIVE,
    }
    inbound = {
        "event_id": new_ulid(),
        "channel": {"service": "web", "channel": "support"},
        "speaker": {"speaker_id": "mallory"},
        "text": "hi",
        "sent_at": NAIVE,
    }
    return {
        names.DELIVER: [{"event": inbound}, {"event": {**inbound, "text": "x" * 40_000}}],
        names.IMPULSE: [{"event_id": new_ulid(), "trigger": "heartbeat", "text": "x", "at": NAIVE}],
        names.ACTIVATION_FINISHED: [{"marker": marker}],
        names.CONVERSATION_CLOSED: [
            {
                "conversation_id": conversation_id,
                "channel_key": "web:support",
                "closed_at": NAIVE,
                "reason": "forged",
            }
        ],
        names.INBOUND: [{"event": inbound, "person_id": new_ulid(), "person_name": "M"}],
        # A hold with no idle time, or an ID no call has; an end with no reason.
        names.CALL_BEGAN: [
            {"call_id": "c-1", "tenant": "t", "idle_timeout_s": 0},
            {"call_id": "not/an/id", "tenant": "t", "idle_timeout_s": 60},
        ],
        names.CALL_ENDED: [{"call_id": "c-1"}, {"call_id": "", "reason": "forged"}],
    }


MALFORMED: list[list[Any]] = [[], [None], ["a string"], [42], [{}], [{"unknown": 1}], [{}, {}]]
"""Argument lists any signal might be sent: none, null, wrong types, two payloads."""


async def test_no_malformed_signal_can_stall_an_agent(harness: Harness) -> None:
    handle = (await harness.create_agent()).handle
    first = await harness.say(handle, "hello", channel=WEB)
    assert first.marker is not None and first.marker.conversation_id is not None
    conversation = first.marker.conversation_id
    call = StartCallInput(
        call_id=f"boundary-{new_ulid()}",
        agent=handle,
        direction=CallDirection.INBOUND,
        tenant="boundary",
    )
    on_queue = harness.deps.settings.model_copy(update={"task_queue": harness.task_queue})
    await open_call(client=harness.client, settings=on_queue, start=call)
    targets = {
        "AgentWorkflow": names.agent_workflow_id(handle),
        "ConversationWorkflow": names.conversation_workflow_id(conversation),
        "CallWorkflow": names.call_workflow_id(call.call_id),
    }
    sent: list[str] = []
    for cls in WORKFLOWS:
        definition = workflow._Definition.must_from_class(cls)
        if not definition.signals:
            continue
        # Every signal-handling workflow an integrator can reach is covered here.
        assert definition.name in targets, f"add {definition.name} to this test"
        target = harness.client.get_workflow_handle(targets[definition.name])
        specific = near_misses(conversation, first.event_id)
        # A call's hang-up goes last: ``{}`` is a valid one (its reason has a default), and
        # nothing can be signalled to the call once it has ended.
        for name in sorted(definition.signals, key=lambda n: n == names.HANG_UP):
            assert name is not None
            for args in [*MALFORMED, *([p] for p in specific.get(name, []))]:
                if name == names.HANG_UP and args == [{}]:
                    break
                await target.signal(name, args=args)
            sent.append(name)
    assert {names.DELIVER, names.ACTIVATION_FINISHED, names.INBOUND} <= set(sent)
    assert {names.CALL_BEGAN, names.CALL_ENDED} <= set(sent)

    # The call's session took none of the garbage: still open, nothing queued, and one turn,
    # from the one valid payload among them (``{}``: a turn that names no conversation).
    # It still holds the agent's lock: no garbage took it or gave it back.
    state = await call_state(client=harness.client, call_id=call.call_id)
    assert state is not None and state.ended is None
    assert (state.turns, state.conversation_id, state.pending) == (1, None, [])
    held = (await status(harness, handle)).call
    assert held is not None and held.call.call_id == call.call_id and held.since is not None
    await harness.client.get_workflow_handle(targets["CallWorkflow"]).signal(
        names.HANG_UP, args=[{}]
    )
    ended = await harness.client.get_workflow_handle(targets["CallWorkflow"]).result()
    assert ended["ended"] == "hang-up"

    # Signals are handled in order, so once the next message is answered all were seen.
    again = await asyncio.wait_for(harness.say(handle, "still with me?", channel=WEB), 60)
    assert again.marker is not None and again.marker.outcome is Outcome.SPOKE
    assert again.marker.text == "still with me?"
    assert again.marker.conversation_id == conversation
    assert (await status(harness, handle)).call is None
    assert await task_failures(harness.client, targets["AgentWorkflow"]) == 0
    assert await task_failures(harness.client, targets["ConversationWorkflow"]) == 0
    assert await task_failures(harness.client, targets["CallWorkflow"]) == 0
    # The forged completion for the finished event changed nothing.
    kept = await marker_of(harness, handle, first.event_id)
    assert kept is not None and kept.text == "hello"


# -- 3. forged completion -----------------------------------------------------------------------


async def test_a_forged_completion_neither_answers_the_submitter_nor_frees_the_lock(
    client: Client, stack: Stack
) -> None:
    rules = [ScriptRule(match="take your time", delay_ms=2500, reply="the real answer")]
    async with running_worker(client, stack, rules=rules) as harness:
        handle = (await harness.create_agent()).handle
        ev = event("take your time", channel=WEB)
        waiting = asyncio.create_task(harness.send(handle, ev))
        found: list[AgentStatus] = []

        async def in_flight() -> bool:
            try:
                answer = await status(harness, handle)
            except RPCError:
                return False  # update-with-start has not created the workflow yet
            found.append(answer)
            return answer.in_flight_event == ev.event_id and bool(answer.open_conversations)

        await until(in_flight)
        conversation = found[-1].open_conversations[0].conversation_id
        now = datetime.now(UTC)
        forged = CompletionMarker(
            event_id=ev.event_id,
            activation_id=new_ulid(),
            conversation_id=conversation,
            outcome=Outcome.SPOKE,
            text="FORGED",
            completed_at=now,
            expires_at=now + timedelta(hours=1),
        )
        await agent_handle(harness, handle).signal(
            names.ACTIVATION_FINISHED, ActivationFinished(marker=forged)
        )
        # The lock still holds: the event is still the one in flight.
        assert (await status(harness, handle)).in_flight_event == ev.event_id

        receipt = await waiting
        assert receipt.marker is not None and receipt.marker.text == "the real answer"
        assert receipt.marker.activation_id != forged.activation_id

        # A replay of the real completion with other text, after the fact, changes nothing.
        replayed = receipt.marker.model_copy(update={"text": "FORGED AGAIN"})
        await agent_handle(harness, handle).signal(
            names.ACTIVATION_FINISHED, ActivationFinished(marker=replayed)
        )
        follow = await harness.say(handle, "and now?", channel=WEB)
        assert follow.marker is not None and follow.marker.text == "and now?"
        kept = await marker_of(harness, handle, ev.event_id)
        assert kept is not None and kept.text == "the real answer"


# -- smaller cuts -------------------------------------------------------------------------------


async def test_an_event_id_reused_for_different_text_is_a_conflict(harness: Harness) -> None:
    handle = (await harness.create_agent()).handle
    ev = event("the original", channel=WEB)
    first = await harness.send(handle, ev)

    with pytest.raises(inbox.SubmitRejectedError, match="already used for a different event"):
        await harness.send(handle, ev.model_copy(update={"text": "something else"}))
    # The same event again is a retry: the same receipt.
    assert await harness.send(handle, ev) == first
    # Delivered, the conflicting event is dropped, and the first marker stands.
    await inbox.deliver(
        harness.client,
        handle=handle,
        event=ev.model_copy(update={"text": "something else"}),
        task_queue=harness.task_queue,
    )
    follow = await harness.say(handle, "next", channel=WEB)
    assert follow.marker is not None and follow.marker.text == "next"
    kept = await marker_of(harness, handle, ev.event_id)
    assert kept is not None and kept.text == "the original"
    assert (await status(harness, handle)).handled == 2


async def test_an_oversized_deliver_is_refused_with_its_reason(harness: Harness) -> None:
    handle = (await harness.create_agent()).handle
    await inbox.start_agent(harness.client, handle=handle, task_queue=harness.task_queue)
    event_id = new_ulid()
    payload = {
        "event": {
            "event_id": event_id,
            "channel": {"service": "web", "channel": "support"},
            "speaker": {"speaker_id": "grace"},
            "text": "x" * 40_000,
        }
    }
    await agent_handle(harness, handle).signal(names.DELIVER, payload)
    found: list[CompletionMarker] = []

    async def refused() -> bool:
        marker = await marker_of(harness, handle, event_id)
        found.extend([marker] if marker else [])
        return marker is not None

    await until(refused)
    assert found[0].outcome is Outcome.FAILED
    assert "event.text" in (found[0].reason or "") and "40,000" in (found[0].reason or "")

    # Fixed and sent again under the same ID, it is taken: the refusal does not hold the ID.
    fixed = event("a short one", channel=WEB, event_id=event_id)
    receipt = await harness.send(handle, fixed)
    assert receipt.marker is not None and receipt.marker.text == "a short one"


async def test_bad_query_input_names_the_field_and_status_needs_none(harness: Harness) -> None:
    handle = (await harness.create_agent()).handle
    await harness.say(handle, "hi", channel=WEB)
    agent = agent_handle(harness, handle)

    assert (await status(harness, handle)).handled == 1  # no argument at all
    with pytest.raises(Exception) as caught:
        await agent.query(names.MARKER, {"event_id": "not-a-ulid"})
    assert "event_id" in str(caught.value) and "is not a ULID" in str(caught.value)


async def test_bad_update_input_is_a_non_retryable_error_naming_the_field(
    harness: Harness,
) -> None:
    handle = (await harness.create_agent()).handle
    await inbox.start_agent(harness.client, handle=handle, task_queue=harness.task_queue)
    payload = {"event": {**event("hi", channel=WEB).model_dump(mode="json"), "addressed": "maybe"}}

    with pytest.raises(WorkflowUpdateFailedError) as caught:
        await agent_handle(harness, handle).execute_update(names.SUBMIT, payload, id=new_ulid())

    cause = caught.value.cause
    assert isinstance(cause, ApplicationError)
    assert (cause.type, cause.non_retryable) == ("InvalidInput", True)
    assert cause.message.startswith("invalid submit input: event.addressed:")


async def test_speakers_are_never_blank(harness: Harness) -> None:
    with pytest.raises(ValueError):
        Speaker(speaker_id="   ")
