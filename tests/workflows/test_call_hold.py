"""The door of a call's hold (``call_began``, ``call_ended``) and the hold's rules.

Any payload either takes the lock for a call, exactly as it validates, or is dropped: it never
fails a workflow task, and the agent answers the next message as before. The rules of the hold
(``workflows.call_hold``) are pure, and checked here without a server.
"""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta
from typing import Any

from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from pydantic import ValidationError
from temporalio.api.enums.v1 import EventType, WorkflowTaskFailedCause

from contract import names
from schemas.agents import AgentState, AgentStatus
from schemas.events import ChannelRef, Outcome
from schemas.voice import HOLD_GRACE_S, CallBegan, CallEnded, call_channel
from tests.harness import Harness, event, unique
from workflows import call_hold

JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3)
    ),
    max_leaves=10,
)
BEGAN = st.fixed_dictionaries(
    {},
    optional={
        "call_id": st.sampled_from(["c-1", "", "x" * 129, "a b", "c/1"]) | JSON,
        "tenant": st.text(max_size=70) | JSON,
        "person_name": st.text(max_size=20) | JSON,
        "number": st.sampled_from(["+15550001", "12", "phone"]) | JSON,
        "idle_timeout_s": st.sampled_from([0, -1, 1, 600, 86_401]) | JSON,
        "extra": JSON,
    },
)
ENDED = st.fixed_dictionaries(
    {}, optional={"call_id": st.sampled_from(["c-1", ""]) | JSON, "reason": JSON}
)
WEB = ChannelRef(service="web", channel="support")
UNHANDLED_COMMAND = WorkflowTaskFailedCause.WORKFLOW_TASK_FAILED_CAUSE_UNHANDLED_COMMAND


def _valid(model: type[CallBegan] | type[CallEnded], payload: Any) -> Any:
    try:
        return model.model_validate(payload)
    except ValidationError:
        return None


async def _status(harness: Harness, handle: str) -> AgentStatus:
    answer: AgentStatus = await harness.client.get_workflow_handle(
        names.agent_workflow_id(handle)
    ).query(names.STATUS, result_type=AgentStatus)
    return answer


@settings(
    max_examples=20,
    deadline=None,
    # Each example runs on the real stack: a failure is reported as found, not shrunk.
    phases=[Phase.explicit, Phase.reuse, Phase.generate],
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(began=BEGAN | JSON, ended=ENDED | JSON)
async def test_any_call_began_or_ended_takes_the_lock_as_it_validates_or_is_dropped(
    harness: Harness, began: Any, ended: Any
) -> None:
    handle = getattr(harness, "_door_agent", None)
    if handle is None:
        handle = (await harness.create_agent()).handle
        assert (await harness.say(handle, "hello", channel=WEB)).marker is not None
        harness._door_agent = handle  # type: ignore[attr-defined]
    agent = harness.client.get_workflow_handle(names.agent_workflow_id(handle))
    # Signed by this client, as Persyn's own processes sign: only the payload is hostile.
    await agent.signal(names.CALL_BEGAN, args=[began])
    await agent.signal(names.CALL_ENDED, args=[ended])
    taken, given_back = _valid(CallBegan, began), _valid(CallEnded, ended)
    held = (await _status(harness, handle)).call
    if taken is None or (given_back is not None and given_back.call_id == taken.call_id):
        assert held is None
    else:
        assert held is not None and held.call == taken
        await agent.signal(names.CALL_ENDED, CallEnded(call_id=taken.call_id, reason="test"))
    again = await asyncio.wait_for(harness.say(handle, "still with me?", channel=WEB), 60)
    assert again.marker is not None and again.marker.outcome is Outcome.SPOKE
    assert await _task_failures(harness, names.agent_workflow_id(handle)) == []


async def _task_failures(harness: Harness, workflow_id: str) -> list[str]:
    """Why each workflow task of every run of ``workflow_id`` failed (a poison pill shows).

    A continue-as-new that crossed a signal is refused by the server (``UnhandledCommand``)
    and the task is run again with the signal: that is the protocol, not a failure.
    """
    found = []
    async for run in harness.client.list_workflows(f"WorkflowId = '{workflow_id}'"):
        history = await harness.client.get_workflow_handle(
            workflow_id, run_id=run.run_id
        ).fetch_history()
        found += [
            e.workflow_task_failed_event_attributes.failure.message[:300]
            for e in history.events
            if e.event_type == EventType.EVENT_TYPE_WORKFLOW_TASK_FAILED
            and e.workflow_task_failed_event_attributes.cause != UNHANDLED_COMMAND
        ]
    return found


NOW = datetime(2026, 12, 5, 9, 0, tzinfo=UTC)


def _began(call_id: str, *, tenant: str = "t", idle: float = 60) -> CallBegan:
    return CallBegan(call_id=call_id, tenant=tenant, person_name="Grace", idle_timeout_s=idle)


def test_a_call_asked_while_busy_takes_the_lock_only_once_the_inbox_is_free() -> None:
    state = AgentState(handle="ada")
    assert call_hold.ask(state, _began("c-1"), now=NOW, free=False)
    assert not call_hold.ask(state, _began("c-1"), now=NOW, free=True), "asked once"
    assert call_hold.holder(state) is None
    typed = event("hi", channel=WEB)
    state.queue.append(typed)
    assert call_hold.next_index(state) is None, "nothing goes while the call waits"
    call_hold.take(state, now=NOW + timedelta(seconds=5))
    hold = call_hold.holder(state)
    assert hold is not None and hold.since == NOW + timedelta(seconds=5)
    assert hold.describe() == "on a call with Grace (call c-1)"


def test_while_a_call_holds_only_its_channel_goes_and_the_rest_wait_in_order() -> None:
    state = AgentState(handle="ada")
    call_hold.ask(state, _began("c-1"), now=NOW, free=True)
    call_hold.ask(state, _began("c-2"), now=NOW, free=True)
    first, second = event("one", channel=WEB), event("two", channel=WEB)
    mine = event("said on the call", channel=call_channel("t", "c-1"))
    other_call = event("said on the other call", channel=call_channel("t", "c-2"))
    state.queue.extend([first, other_call, mine, second])
    assert call_hold.next_index(state) == 2
    state.queue.pop(2)
    assert call_hold.next_index(state) is None
    assert call_hold.end(state, "c-1") is not None
    call_hold.take(state, now=NOW)
    assert call_hold.next_index(state) == 1, "the next call takes the lock, its turn goes"
    call_hold.end(state, "c-2")
    assert call_hold.next_index(state) == 0, "then the rest, in arrival order"


def test_a_placed_calls_channel_is_found_by_its_id_then_pinned_to_its_tenant() -> None:
    state = AgentState(handle="ada")
    call_hold.ask(state, _began("c-9", tenant=""), now=NOW, free=True)
    hold = call_hold.holder(state)
    assert hold is not None
    assert not call_hold.matches(hold, ChannelRef(service="web", channel="c-9"))
    call_hold.heard(state, call_channel("tenant-a", "c-9"), now=NOW)
    assert hold.channel_key == call_channel("tenant-a", "c-9").key
    assert not call_hold.matches(hold, call_channel("tenant-b", "c-9"))


def test_a_silent_call_lapses_after_its_idle_time_and_the_grace_and_a_turn_renews_it() -> None:
    state = AgentState(handle="ada")
    call_hold.ask(state, _began("c-1", idle=60), now=NOW, free=True)
    due = NOW + timedelta(seconds=60 + HOLD_GRACE_S)
    assert call_hold.wait_limit(state, now=NOW) == due - NOW
    assert call_hold.settle(state, now=due - timedelta(seconds=1)) is None
    call_hold.heard(state, call_channel("t", "c-1"), now=due - timedelta(seconds=1))
    assert call_hold.settle(state, now=due) is None, "a turn renewed it"
    lapsed = call_hold.settle(state, now=due - timedelta(seconds=1) + (due - NOW))
    assert lapsed is not None and state.calls == []
    assert call_hold.wait_limit(state, now=NOW) is None


def test_a_call_began_is_refused_without_its_idle_time_or_with_a_bad_id() -> None:
    for payload in ({}, {"call_id": "c-1", "tenant": "t"}, {"call_id": "a b", "tenant": "t"}):
        assert _valid(CallBegan, payload) is None
    assert _valid(CallBegan, {"call_id": unique("c"), "tenant": "", "idle_timeout_s": 5})
