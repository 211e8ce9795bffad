"""``place_call`` dials a person once per tool call, whatever crashes or retries come between.

Each test runs the tool as the invoke activity does, against a local fake of Vapi's API that
counts every dial, and runs it again with the same tool call ID, as a retried attempt does.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import pytest
from temporalio.client import Client, WorkflowExecutionStatus

import activities.voice.dialing as dialing
from activities.tools.builtin.deps import ToolDeps
from activities.tools.registry import ToolError, ToolRun
from activities.voice.tools import CallPlaced, PlaceCall, PlaceCallInput
from activities.voice.transport import CallTransport, VapiTransport
from contract import names
from schemas.agents import AgentCreate
from schemas.ids import new_ulid
from schemas.tools import ToolContext
from schemas.voice import CallRef
from store.db import Database
from store.queries.agents import create_agent
from store.tables.voice import DialIntentRow, DialStatus
from tests.harness import Stack, terminal, unique
from tests.voice.calls import known_person
from tests.voice.fake_vapi import KEY, CrashAfterDial, FakeVapi, WorkerCrashError, fake_vapi

NUMBER = "+15550001"


@dataclass
class Line:
    """An agent who knows Grace by her number, and a transport to Vapi's fake."""

    fake: FakeVapi
    db: Database
    deps: ToolDeps
    client: Client
    agent: str
    person: str

    def transport(self, *, timeout_s: float = 15.0) -> VapiTransport:
        return VapiTransport(
            api_key=KEY, base_url=self.fake.base_url, phone_number_id="pn-1", timeout_s=timeout_s
        )

    async def place(self, call_id: str, transport: CallTransport | None = None) -> CallPlaced:
        """One attempt of the tool call ``call_id``."""
        tool = PlaceCall(self.deps, transport or self.transport(), self.client)
        context = ToolContext(
            agent=self.agent,
            activation_id=new_ulid(),
            conversation_id=new_ulid(),
            channel=terminal(),
            person_id=new_ulid(),
        )
        run = ToolRun(context=context, now=datetime.now(UTC), call_id=call_id)
        return await tool.run(run, PlaceCallInput(contact="Grace", first_message="Hi Grace!"))

    async def intent(self, call_id: str) -> DialIntentRow | None:
        async with self.db.session() as session:
            return await session.get(DialIntentRow, call_id)

    async def session_run(self, call_id: str) -> tuple[str, WorkflowExecutionStatus | None]:
        """The call's workflow: its run ID and status (it waits, unserved, on its own queue)."""
        handle = self.client.get_workflow_handle(names.call_workflow_id(call_id))
        described = await handle.describe()
        return described.run_id, described.status


@asynccontextmanager
async def line(stack: Stack, client: Client) -> AsyncIterator[Line]:
    async with fake_vapi() as fake:
        db = Database(stack.dsn, pool_size=2)
        try:
            spec = AgentCreate(handle=unique("dialer"), name="Ada", persona="A test agent.")
            async with db.session() as session:
                agent = (await create_agent(session, spec=spec)).handle
            person = await known_person(db, agent, NUMBER, "Grace")
            # A queue no worker serves: the call's session is started and stays as started.
            settings = stack.settings(task_queue=unique("dial"))
            deps = ToolDeps(db=db, settings=settings, models=None, client=client)  # type: ignore[arg-type]
            yield Line(fake, db, deps, client, agent, person)
        finally:
            await db.aclose()


@dataclass
class CrashBeforeDial:
    """A transport whose attempt dies after the intent was written, before anything dials."""

    inner: CallTransport

    async def dial(self, to: str, agent: str, first_message: str, *, key: str) -> CallRef:
        raise WorkerCrashError("the worker died before it dialled")

    async def find(self, key: str, since: datetime) -> CallRef | None:
        return await self.inner.find(key, since)


async def _crash_writing_the_answer(*_: Any, **__: Any) -> None:
    raise WorkerCrashError("the worker died writing the transport's answer")


def _before_the_dial(line: Line, patch: pytest.MonkeyPatch) -> CallTransport | None:
    return CrashBeforeDial(line.transport())


def _with_the_answer_in_hand(line: Line, patch: pytest.MonkeyPatch) -> CallTransport | None:
    return CrashAfterDial(line.transport())


def _writing_the_answer(line: Line, patch: pytest.MonkeyPatch) -> CallTransport | None:
    patch.setattr(dialing, "record_placed", _crash_writing_the_answer)
    return None


CRASH_POINTS: dict[str, Callable[[Line, pytest.MonkeyPatch], CallTransport | None]] = {
    "before the dial": _before_the_dial,
    "with the answer in hand": _with_the_answer_in_hand,
    "writing the answer": _writing_the_answer,
}


@pytest.mark.parametrize("point", list(CRASH_POINTS))
async def test_a_retry_after_a_crash_dials_once_and_returns_the_same_call(
    stack: Stack, client: Client, monkeypatch: pytest.MonkeyPatch, point: str
) -> None:
    async with line(stack, client) as grace:
        call_id = new_ulid()
        with monkeypatch.context() as patch:
            crashing = CRASH_POINTS[point](grace, patch)
            with pytest.raises(WorkerCrashError):
                await grace.place(call_id, crashing)
        intent = await grace.intent(call_id)
        assert intent is not None and intent.status == DialStatus.DIALING
        assert (intent.person_id, intent.number) == (grace.person, NUMBER)

        placed = await grace.place(call_id)
        again = await grace.place(call_id)  # and a crash after the result, before it was stored

        assert len(grace.fake.calls) == 1, "Grace's phone rang more than once"
        [call] = grace.fake.placed
        assert placed.call_id == again.call_id == call["id"]
        assert call["assistantOverrides"]["metadata"]["persyn_dial"] == call_id
        # The retry asked before it dialled; the one after found the answer recorded.
        assert len(grace.fake.lookups) == 1
        [lookup] = grace.fake.lookups
        assert lookup["phoneNumberId"] == "pn-1" and lookup["createdAtGe"] < call["createdAt"]
        intent = await grace.intent(call_id)
        assert intent is not None and intent.status == DialStatus.PLACED
        assert intent.call_id == call["id"]
        run_id, status = await grace.session_run(call["id"])
        assert status is WorkflowExecutionStatus.RUNNING
        await grace.place(call_id)
        assert await grace.session_run(call["id"]) == (run_id, status)
        assert len(grace.fake.calls) == 1


async def test_a_retry_after_the_session_started_joins_it(stack: Stack, client: Client) -> None:
    async with line(stack, client) as grace:
        call_id = new_ulid()
        first = await grace.place(call_id)
        run_id, _ = await grace.session_run(first.call_id)
        # The worker died before the tool call's result was stored: the attempt runs again.
        second = await grace.place(call_id)
        assert second == first
        assert (await grace.session_run(first.call_id))[0] == run_id
        assert len(grace.fake.calls) == 1 and grace.fake.lookups == []
        # The call was spoken and ended before a later retry came: no second session opens.
        handle = client.get_workflow_handle(names.call_workflow_id(first.call_id))
        await handle.terminate(reason="the call ended")
        assert await grace.place(call_id) == first
        assert await grace.session_run(first.call_id) == (
            run_id,
            WorkflowExecutionStatus.TERMINATED,
        )
        # A later tool call is another call: it rings again.
        other = await grace.place(new_ulid())
        assert other.call_id != first.call_id and len(grace.fake.calls) == 2


LOOKUP_FAULTS: dict[str, tuple[dict[str, Any], str]] = {
    "refused": ({"refuse_lookup": 503}, "the voice transport refused the call lookup (503)"),
    "silent": ({"lookup_after_s": 3.0}, "did not answer the call lookup: ReadTimeout"),
    "not a list": ({"lookup_answer": {"calls": []}}, "call lookup did not list calls"),
    "a full page without the key": (
        {"lookup_answer": [{"id": f"other-{i}", "status": "ended"} for i in range(100)]},
        "cannot tell whether it was placed",
    ),
}


@pytest.mark.parametrize("fault", list(LOOKUP_FAULTS))
async def test_a_lookup_that_cannot_tell_fails_in_one_line_and_never_dials_blind(
    stack: Stack, client: Client, fault: str
) -> None:
    faults, says = LOOKUP_FAULTS[fault]
    async with line(stack, client) as grace:
        call_id = new_ulid()
        with pytest.raises(WorkerCrashError):
            await grace.place(call_id, CrashAfterDial(grace.transport()))
        for name, value in faults.items():
            setattr(grace.fake, name, value)
        with pytest.raises(ToolError) as failed:
            await grace.place(call_id, grace.transport(timeout_s=0.5))
        assert says in str(failed.value) and "\n" not in str(failed.value)
        assert len(grace.fake.calls) == 1
        intent = await grace.intent(call_id)
        assert intent is not None and intent.status == DialStatus.DIALING

        # The transport answers again: the next attempt finds the call instead of dialling.
        grace.fake.refuse_lookup, grace.fake.lookup_answer, grace.fake.lookup_after_s = (
            None,
            None,
            0.0,
        )
        placed = await grace.place(call_id)
        assert placed.call_id == grace.fake.placed[0]["id"] and len(grace.fake.calls) == 1


async def test_a_dial_left_unanswered_is_looked_up_before_it_is_reported(
    stack: Stack, client: Client
) -> None:
    async with line(stack, client) as grace:
        grace.fake.answer_after_s = 3.0  # the call is placed; its answer comes too late
        call_id = new_ulid()
        placed = await grace.place(call_id, grace.transport(timeout_s=0.5))
        assert placed.call_id == grace.fake.placed[0]["id"]
        assert len(grace.fake.calls) == 1 and len(grace.fake.lookups) == 1

        # Nothing placed and no answer: said in one line, and a retry says it again.
        grace.fake.refuse = "customer.number must be a valid phone number"
        nothing = new_ulid()
        with pytest.raises(ToolError, match=r"did not answer: ReadTimeout$"):
            await grace.place(nothing, grace.transport(timeout_s=0.5))
        grace.fake.refuse, grace.fake.answer_after_s = None, 0.0
        with pytest.raises(ToolError, match=r"did not answer: ReadTimeout$"):
            await grace.place(nothing)
        assert len(grace.fake.calls) == 2 and len(grace.fake.placed) == 1
        intent = await grace.intent(nothing)
        assert intent is not None and intent.status == DialStatus.FAILED


async def test_a_dial_left_unanswered_whose_lookup_fails_is_asked_again_on_retry(
    stack: Stack, client: Client
) -> None:
    async with line(stack, client) as grace:
        grace.fake.answer_after_s, grace.fake.refuse_lookup = 3.0, 503
        call_id = new_ulid()
        with pytest.raises(ToolError) as unknown:
            await grace.place(call_id, grace.transport(timeout_s=0.5))
        message = str(unknown.value)
        assert message.startswith("the voice transport did not answer: ReadTimeout; ")
        assert "whether the call was placed is unknown" in message and "\n" not in message
        intent = await grace.intent(call_id)
        assert intent is not None and intent.status == DialStatus.DIALING

        grace.fake.answer_after_s, grace.fake.refuse_lookup = 0.0, None
        placed = await grace.place(call_id)
        assert placed.call_id == grace.fake.placed[0]["id"] and len(grace.fake.calls) == 1
