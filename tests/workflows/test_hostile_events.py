"""No input stalls an agent (issue 26, finding 1), on a running worker.

A NUL in ``speaker.speaker_id`` passed the door, and the step that stored the speaker then failed
on every attempt for 12 minutes while nobody on any channel was answered, and nothing said so.
Here hostile events go through the real ``submit`` update and ``deliver`` signal as raw JSON (as
any Temporal client in any language can send them), and a step PostgreSQL itself refuses is
made to fail by a trigger in the real database: each event ends with a refusal or a marker
naming the step, and the next ordinary message is answered.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import timedelta
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from temporalio.api.common.v1 import Payload
from temporalio.client import WorkflowHandle, WorkflowUpdateFailedError
from temporalio.common import RawValue
from temporalio.exceptions import ApplicationError
from temporalio.testing import WorkflowEnvironment

from activities.gateway.providers.scripted import ScriptedProvider
from cli.stack import inbox_lines
from contract import names
from contract.policies import ACTIVATION_RUN_LIMIT
from schemas.agents import AgentStatus
from schemas.events import ChannelRef, CompletionMarker, Outcome
from schemas.ids import new_ulid
from schemas.models import ProviderName
from store.db import Database
from store.tables import DialogTurnRow
from temporal import inbox
from tests.harness import Harness, Stack, close_dependencies, dependencies, event, unique, until
from tests.schemas.test_hostile_text import STRING_FIELDS, hostile_text
from usecases.inboxes import current_details, inbox_view
from workers.build import build_worker
from workflows.admission import ADMIT_STEP

FAULTS = [
    """
    CREATE OR REPLACE FUNCTION persyn_test_fault() RETURNS trigger AS $$
    BEGIN
      IF NEW.channel LIKE 'fault-data-%%' THEN
        RAISE EXCEPTION 'test fault: value refused' USING ERRCODE = 'data_exception';
      END IF;
      IF NEW.channel LIKE 'fault-down-%%' THEN
        RAISE EXCEPTION 'test fault: connection lost' USING ERRCODE = 'connection_failure';
      END IF;
      RETURN NEW;
    END $$ LANGUAGE plpgsql
    """,
    "DROP TRIGGER IF EXISTS persyn_test_fault ON channels",
    """
    CREATE TRIGGER persyn_test_fault BEFORE INSERT OR UPDATE ON channels
      FOR EACH ROW EXECUTE FUNCTION persyn_test_fault()
    """,
    """
    CREATE OR REPLACE FUNCTION persyn_test_turn_fault() RETURNS trigger AS $$
    BEGIN
      IF NEW.text LIKE 'fault-down%%' THEN
        RAISE EXCEPTION 'test fault: turn not written' USING ERRCODE = 'connection_failure';
      END IF;
      RETURN NEW;
    END $$ LANGUAGE plpgsql
    """,
    "DROP TRIGGER IF EXISTS persyn_test_turn_fault ON dialog_turns",
    """
    CREATE TRIGGER persyn_test_turn_fault BEFORE INSERT ON dialog_turns
      FOR EACH ROW EXECUTE FUNCTION persyn_test_turn_fault()
    """,
]
"""Faults in the real database: a channel named ``fault-data-*`` is refused as PostgreSQL
refuses a value it cannot hold (``data_exception``, what a NUL caused); ``fault-down-*`` fails
as a lost connection does, on every attempt; so does writing a turn whose text starts
``fault-down``."""


@pytest.fixture
async def faults(stack: Stack) -> AsyncIterator[None]:
    db = Database(stack.dsn)
    async with db.session() as session:
        connection = await session.connection()
        for statement in FAULTS:
            await connection.exec_driver_sql(statement)
        await session.commit()
    yield
    async with db.session() as session:
        connection = await session.connection()
        await connection.exec_driver_sql("DROP TRIGGER IF EXISTS persyn_test_fault ON channels")
        await connection.exec_driver_sql(
            "DROP TRIGGER IF EXISTS persyn_test_turn_fault ON dialog_turns"
        )
        await session.commit()
    await db.aclose()


def raw(payload: dict[str, Any]) -> RawValue:
    """A payload exactly as a client in another language may send it (escaped JSON)."""
    data = json.dumps(payload, ensure_ascii=True).encode()
    return RawValue(Payload(metadata={"encoding": b"json/plain"}, data=data))


def submit_payload(field: tuple[str, ...], value: str) -> dict[str, Any]:
    payload: dict[str, Any] = {
        "event": event("hello", channel=ChannelRef(service="web", channel="support")).model_dump(
            mode="json"
        )
    }
    target = payload
    for key in field[:-1]:
        target = target[key]
    target[field[-1]] = value
    return payload


@asynccontextmanager
async def skipping_harness(skipping: WorkflowEnvironment, stack: Stack) -> AsyncIterator[Harness]:
    """A worker with the scripted model on the time-skipping server, on its own task queue."""
    deps = dependencies(
        stack.settings(), providers={ProviderName.SCRIPTED: ScriptedProvider()}, dsn=stack.dsn
    )
    queue = unique("tq")
    try:
        async with build_worker(skipping.client, deps, task_queue=queue) as worker:
            yield Harness(skipping.client, queue, deps, ScriptedProvider(), worker, deps.db)
    finally:
        await close_dependencies(deps)


def agent_of(harness: Harness, handle: str) -> WorkflowHandle[Any, Any]:
    return harness.client.get_workflow_handle(names.agent_workflow_id(handle))


async def status_of(agent: WorkflowHandle[Any, Any]) -> AgentStatus:
    answer: AgentStatus = await agent.query(names.STATUS, result_type=AgentStatus)
    return answer


async def answered_next(harness: Harness, handle: str) -> None:
    """An ordinary message is answered, and nothing waits behind it."""
    receipt = await harness.say(handle, "are you still there?")
    assert receipt.marker is not None and receipt.marker.outcome is Outcome.SPOKE
    status = await status_of(agent_of(harness, handle))
    assert (status.queued, status.in_flight, status.oldest_waiting_since) == (0, None, None)


async def test_a_nul_in_the_speaker_is_refused_by_submit_and_by_deliver(harness: Harness) -> None:
    handle = (await harness.create_agent()).handle
    await inbox.start_agent(harness.client, handle=handle, task_queue=harness.task_queue)
    agent = agent_of(harness, handle)

    for field in (("event", "speaker", "speaker_id"), ("event", "speaker", "display_name")):
        with pytest.raises(WorkflowUpdateFailedError) as caught:
            await agent.execute_update(
                names.SUBMIT, raw(submit_payload(field, "u\x0017")), id=new_ulid()
            )
        cause = caught.value.cause
        assert isinstance(cause, ApplicationError) and cause.non_retryable
        assert ".".join(field) in cause.message and "NUL" in cause.message

    # Delivered, the event has no one waiting: its marker says why, naming the field. A lone
    # surrogate (escaped in the JSON) too, though pydantic's parser refuses the whole document.
    for field, value in (
        (("event", "speaker", "speaker_id"), "u\x0017"),
        (("event", "speaker", "display_name"), "In\ud800es"),
    ):
        delivered = submit_payload(field, value)
        event_id = delivered["event"]["event_id"]
        await agent.signal(names.DELIVER, raw(delivered))
        found: list[CompletionMarker] = []

        async def refused(event_id: str = event_id, found: list[CompletionMarker] = found) -> bool:
            answer = await inbox.marker(harness.client, handle=handle, event_id=event_id)
            found.extend([answer.marker] if answer.marker else [])
            return bool(found)

        await until(refused)
        assert found[0].outcome is Outcome.FAILED
        assert ".".join(field) in (found[0].reason or "")
    await answered_next(harness, handle)


hostile_events = st.tuples(st.sampled_from(STRING_FIELDS), hostile_text)


@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(case=hostile_events)
async def test_any_hostile_event_ends_in_a_refusal_or_a_reply(
    harness: Harness, case: tuple[tuple[str, ...], str]
) -> None:
    field, value = case
    handle = getattr(harness, "_hostile_agent", None)
    if handle is None:
        handle = (await harness.create_agent()).handle
        await inbox.start_agent(harness.client, handle=handle, task_queue=harness.task_queue)
        harness._hostile_agent = handle  # type: ignore[attr-defined]
    agent = agent_of(harness, handle)
    try:
        receipt = await agent.execute_update(
            names.SUBMIT, raw(submit_payload(field, value)), id=new_ulid()
        )
    except WorkflowUpdateFailedError as err:
        assert isinstance(err.cause, ApplicationError)
        assert err.cause.type in ("InvalidInput", "EventIdConflict")
        assert "\n" not in err.cause.message
    else:
        assert receipt["marker"]["outcome"] in ("spoke", "silent", "degraded")
    await answered_next(harness, handle)


async def test_a_value_postgresql_refuses_ends_the_event_at_once_naming_the_step(
    harness: Harness, faults: None
) -> None:
    handle = (await harness.create_agent()).handle
    poisoned = ChannelRef(service="web", channel=unique("fault-data"))

    receipt = await harness.say(handle, "hello", channel=poisoned)

    assert receipt.marker is not None and receipt.marker.outcome is Outcome.FAILED
    reason = receipt.marker.reason or ""
    assert f"step '{ADMIT_STEP}' failed after 1 attempt" in reason
    assert "DataError" in reason and "value refused" in reason
    await answered_next(harness, handle)


async def test_a_step_that_keeps_failing_is_visible_then_ends_within_its_bound(
    skipping: WorkflowEnvironment, stack: Stack, faults: None
) -> None:
    async with skipping_harness(skipping, stack) as harness:
        queue = harness.task_queue
        handle = (await harness.create_agent()).handle
        stuck = event("hello", channel=ChannelRef(service="web", channel=unique("fault-down")))
        behind = event("me too", channel=ChannelRef(service="web", channel="support"))
        await inbox.deliver(skipping.client, handle=handle, event=stuck, task_queue=queue)
        await inbox.deliver(skipping.client, handle=handle, event=behind, task_queue=queue)
        agent = agent_of(harness, handle)

        # While it retries, the agent says which event, which step, which attempt and why.
        async def retrying() -> bool:
            flight = (await status_of(agent)).in_flight
            return flight is not None and flight.attempt >= 3

        await until(retrying, timeout=120)
        # Taken from the queue but not yet in its activation, it is pending, not lost.
        answer = await inbox.marker(skipping.client, handle=handle, event_id=stuck.event_id)
        assert answer.marker is None and answer.pending
        status = await status_of(agent)
        assert status.queued == 1 and status.oldest_waiting_since is not None
        flight = status.in_flight
        assert flight is not None and flight.event_id == stuck.event_id
        assert flight.step == ADMIT_STEP and "connection lost" in (flight.last_error or "")
        details = await current_details(agent)
        assert details is not None and f"step '{ADMIT_STEP}' is retrying" in details
        # persyn status shows the same, with ages.
        view = await inbox_view(skipping.client, handle)
        assert view.queued == 1 and view.oldest_waiting_seconds is not None
        assert view.in_flight is not None and view.in_flight.step == ADMIT_STEP
        shown = "\n".join(inbox_lines([view]))
        assert f"in flight: event {stuck.event_id}" in shown
        assert f"step '{ADMIT_STEP}', attempt" in shown and "connection lost" in shown

        # Past the step's bound the event fails, naming the step, and the next is answered.
        await skipping.sleep(timedelta(minutes=3))
        failed = (
            await inbox.marker(skipping.client, handle=handle, event_id=stuck.event_id)
        ).marker
        assert failed is not None and failed.outcome is Outcome.FAILED
        assert f"step '{ADMIT_STEP}' failed after" in (failed.reason or "")
        assert "connection lost" in (failed.reason or "")

        async def answered() -> bool:
            found = await inbox.marker(skipping.client, handle=handle, event_id=behind.event_id)
            return found.marker is not None

        await until(answered, timeout=120)
        after = await inbox.marker(skipping.client, handle=handle, event_id=behind.event_id)
        assert after.marker is not None and after.marker.outcome is Outcome.SPOKE


async def test_a_turn_that_cannot_be_written_ends_its_event_and_frees_the_channel(
    skipping: WorkflowEnvironment, stack: Stack, faults: None
) -> None:
    async with skipping_harness(skipping, stack) as harness:
        queue = harness.task_queue
        handle = (await harness.create_agent()).handle
        channel = ChannelRef(service="web", channel="support")
        stuck = event("fault-down: this turn cannot be written", channel=channel)
        behind = event("and this one can", channel=channel)
        await inbox.deliver(skipping.client, handle=handle, event=stuck, task_queue=queue)
        await inbox.deliver(skipping.client, handle=handle, event=behind, task_queue=queue)
        agent = agent_of(harness, handle)

        async def retrying() -> bool:
            details = await current_details(agent)
            return bool(details and f"step '{ADMIT_STEP}' is retrying" in details)

        await until(retrying, timeout=120)
        await skipping.sleep(timedelta(minutes=3))

        async def both_ended() -> bool:
            markers = [
                (await inbox.marker(skipping.client, handle=handle, event_id=e.event_id)).marker
                for e in (stuck, behind)
            ]
            return all(markers)

        await until(both_ended, timeout=120)
        failed = (
            await inbox.marker(skipping.client, handle=handle, event_id=stuck.event_id)
        ).marker
        answered = (
            await inbox.marker(skipping.client, handle=handle, event_id=behind.event_id)
        ).marker
        assert failed is not None and failed.outcome is Outcome.FAILED
        assert f"step '{ADMIT_STEP}' failed after" in (failed.reason or "")
        assert answered is not None and answered.outcome is Outcome.SPOKE
        # Nothing of the failed event was stored: the conversation it would have opened was
        # rolled back with its turn, and the next event opened the channel's conversation.
        assert failed.conversation_id is None and answered.conversation_id is not None
        async with harness.db.session() as session:
            assert await session.get(DialogTurnRow, stuck.event_id) is None

        # Temporal itself bounds the turn that ran: its run timeout is the activation's limit.
        activation = skipping.client.get_workflow_handle(
            names.activation_workflow_id(str(answered.activation_id))
        )
        started = (await activation.fetch_history()).events[0]
        timeout = started.workflow_execution_started_event_attributes.workflow_run_timeout
        assert timeout.ToTimedelta() == ACTIVATION_RUN_LIMIT
