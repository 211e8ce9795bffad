"""Live calls through the voice endpoint, on the real stack (Temporal, PostgreSQL, a worker).

The worker's model (the background pipeline) echoes; the fast model is scripted apart, in the
web process, as a voice platform would reach it.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from sqlmodel import select
from temporalio.client import Client

from activities.gateway.providers.scripted import ScriptRule
from contract import names
from schemas.models import CallPlan, ProviderName
from schemas.voice import CallState, HangUp
from store.tables import Conversation
from tests.harness import Harness, Stack, unique, until
from tests.voice.calls import Line, dialog, known_person, say, serving_calls, turn

FAST = [
    ScriptRule(task="voice", match="quiet", reply=""),
    ScriptRule(task="voice", match="busy", fail="rate_limit", times=5),
    ScriptRule(task="voice", system_match="BACKGROUND-SAID", reply="I looked into it."),
    ScriptRule(task="voice", reply="Spoken: {last}"),
]


async def test_a_call_is_answered_streamed_and_kept_as_one_conversation(
    line: Line, worker: Harness, client: Client
) -> None:
    agent = (await worker.create_agent()).handle
    person = await known_person(worker.db, agent, "+15550001", "Grace")
    call = unique("call")

    status, words = await say(line, turn(agent, call, "Hello there"))
    assert (status, words) == (200, "Spoken: Hello there")
    await line.runtime.drain()
    # The direction is in the fast model's context, naming both parties.
    assert "picked up a phone call from Grace" in line.fast.requests[-1].system

    status, words = await say(
        line, turn(agent, call, "Hello there", words, "What now"), by_model=True
    )
    assert status == 200
    await line.runtime.drain()

    rows = await dialog(worker, agent)
    conversations = {row.conversation_id for row in rows}
    assert len(conversations) == 1, "the second turn of a call continues its conversation"
    person_turns = [row for row in rows if row.role == "person"]
    assert [row.speaker_id for row in person_turns] == [person, person]
    assert person_turns[0].text.endswith("Hello there") and "picked up" in person_turns[0].text
    assert person_turns[1].text == "What now"
    spoken = [row.text for row in rows if row.role == "agent" and row.text.startswith("Spoken")]
    assert spoken == ["Spoken: Hello there"]
    # The first answer had only the seed persona; the second, the prompt the pipeline
    # assembled for this call's conversation (cached until it is refreshed).
    assert "Standing constraints" not in line.fast.requests[0].system
    assert "Standing constraints" in line.fast.requests[-1].system
    # The background run's conclusion was woven into the second answer, fenced.
    assert words == "I looked into it."
    assert "BACKGROUND-SAID [Persyn Test picked up" in line.fast.requests[-1].system
    assert "<material" in line.fast.requests[-1].system

    state: CallState = await client.get_workflow_handle(names.call_workflow_id(call)).query(
        names.CALL_STATE, result_type=CallState
    )
    assert state.conversation_id in conversations and state.turns == 2

    # The call holds the agent's lock until it ends: the next call's turns run after it.
    await client.get_workflow_handle(names.call_workflow_id(call)).signal(names.HANG_UP, HangUp())
    other = unique("call")
    assert (await say(line, turn(agent, other, "Again")))[0] == 200
    await line.runtime.drain()
    rows = await dialog(worker, agent)
    assert len({row.conversation_id for row in rows}) == 2, "a new call is a new conversation"
    async with worker.db.session() as session:
        opened = await session.exec(select(Conversation).where(Conversation.agent == agent))
        assert len(list(opened)) == 2


async def test_a_turn_asked_without_streaming_gets_one_chat_completion(
    line: Line, worker: Harness
) -> None:
    agent = (await worker.create_agent()).handle
    await known_person(worker.db, agent, "+15550001", "Grace")
    body = {**turn(agent, unique("call"), "Hello there", stream=False), "model": "gpt-4o"}
    async with line.http() as http:
        answer = await http.post(f"/voice/v1/agents/{agent}/chat/completions", json=body)
    await line.runtime.drain()
    assert answer.status_code == 200, answer.text
    completion = answer.json()
    assert completion["object"] == "chat.completion" and completion["model"] == "gpt-4o"
    assert completion["choices"][0]["message"] == {
        "role": "assistant",
        "content": "Spoken: Hello there",
    }
    assert completion["choices"][0]["finish_reason"] == "stop"


async def test_an_unknown_caller_is_refused(line: Line, worker: Harness) -> None:
    agent = (await worker.create_agent()).handle
    status, detail = await say(line, turn(agent, unique("call"), "Hi", number="+19990000"))
    assert status == 403
    assert "+19990000" in detail and "PERSYN_VOICE__ALLOW" in detail
    assert await dialog(worker, agent) == []


async def test_nothing_to_say_or_a_failing_model_is_a_holding_phrase(
    line: Line, worker: Harness
) -> None:
    agent = (await worker.create_agent()).handle
    await known_person(worker.db, agent, "+15550001", "Grace")
    call = unique("call")
    holding = "Mm-hm, give me a moment."
    assert await say(line, turn(agent, call, "be quiet")) == (200, holding)
    assert await say(line, turn(agent, call, "be quiet", holding, "you are busy")) == (200, holding)
    await line.runtime.drain()
    rows = await dialog(worker, agent)
    # Nothing lost: both turns reached the conversation, and what was said is recorded.
    assert [r.text for r in rows if r.role == "person"][-1] == "you are busy"
    assert [r.text for r in rows if r.role == "agent" and r.text == holding] == [holding] * 2


async def test_no_call_id_and_bad_bodies_are_refused_in_one_line(line: Line) -> None:
    async with line.http() as http:
        body = turn("ada", "x", "hi")
        del body["call"]
        answer = await http.post("/voice/v1/chat/completions", json=body)
        assert answer.status_code == 422
        assert "x-call-id" in answer.json()["detail"]
        answer = await http.post("/voice/v1/chat/completions", json={"model": "ada"})
        assert answer.status_code == 422 and "\n" not in answer.json()["detail"]
        answer = await http.post("/voice/v1/chat/completions", content=b"[1]")
        assert answer.status_code == 400


async def test_fragments_of_one_turn_are_answered_once(
    client: Client, stack: Stack, worker: Harness, tmp_path: Path
) -> None:
    settings = stack.settings(
        home=tmp_path, task_queue=worker.task_queue, voice={"settle_ms": 1500}
    )
    async with serving_calls(settings, client, fast_rules=FAST) as slow_line:
        agent = (await worker.create_agent()).handle
        await known_person(worker.db, agent, "+15550001", "Grace")
        call = unique("call")
        first = asyncio.create_task(say(slow_line, turn(agent, call, "I want")))

        def settling() -> bool:
            runtime = getattr(slow_line.app.state, "voice", None)
            session = runtime.sessions.get(call) if runtime is not None else None
            return session is not None and session.generation == 1

        await until(settling, timeout=20)
        second = await say(slow_line, turn(agent, call, "I want to book a table"))
        assert await first == (200, "")
        assert second == (200, "Spoken: I want to book a table")
        await slow_line.runtime.drain()
    rows = await dialog(worker, agent)
    assert [r.text.splitlines()[-1] for r in rows if r.role == "person"] == [
        "I want to book a table"
    ]


async def test_the_transports_end_of_call_ends_it(
    line: Line, worker: Harness, client: Client
) -> None:
    agent = (await worker.create_agent()).handle
    await known_person(worker.db, agent, "+15550001", "Grace")
    call = unique("call")
    assert (await say(line, turn(agent, call, "Bye now")))[0] == 200
    await line.runtime.drain()
    async with line.http() as http:
        path = f"/voice/v1/agents/{agent}/events"
        other = await http.post(
            path, json={"message": {"type": "transcript", "call": {"id": call}}}
        )
        assert other.status_code == 200 and other.json()["ended"] is False
        stranger = await http.post(
            path, json={"message": {"type": "end-of-call-report", "call": {"id": "nope"}}}
        )
        assert stranger.status_code == 404
        ended = await http.post(
            path,
            json={
                "message": {
                    "type": "end-of-call-report",
                    "endedReason": "customer-ended-call",
                    "call": {"id": call},
                }
            },
        )
        assert ended.status_code == 200 and ended.json()["ended"] is True
    handle = client.get_workflow_handle(names.call_workflow_id(call), result_type=CallState)
    state = await handle.result()
    assert state.ended == "customer-ended-call"
    status, detail = await say(line, turn(agent, call, "Hello again?"))
    assert status == 409 and "has ended" in detail


async def test_a_call_that_opens_in_silence_is_greeted(line: Line, worker: Harness) -> None:
    agent = (await worker.create_agent()).handle
    await known_person(worker.db, agent, "+15550001", "Grace")
    status, words = await say(line, turn(agent, unique("call")))  # the platform's prompt alone
    await line.runtime.drain()
    assert status == 200 and words == "Spoken: (The call has just connected. Greet Grace.)"
    assert await dialog(worker, agent) == [], "nothing was said to the pipeline yet"


async def test_a_plan_for_a_small_model_has_the_platform_say_hello(
    client: Client, stack: Stack, worker: Harness, tmp_path: Path
) -> None:
    """A model too small to greet repeats the instruction: its plan greets for it."""
    plans = {ProviderName.SCRIPTED: CallPlan(greet_plainly=True)}
    settings = stack.settings(home=tmp_path, task_queue=worker.task_queue, call_plans=plans)
    async with serving_calls(settings, client, fast_rules=FAST) as line:
        created = await worker.create_agent(name="Ada")
        await known_person(worker.db, created.handle, "+15550001", "Grace")
        call = unique("call")
        status, words = await say(line, turn(created.handle, call))
        assert (status, words) == (200, "Hello Grace, this is Ada.")
        assert line.fast.requests == [], "the fast model was not asked"
        # The caller's words are the model's again.
        status, words = await say(line, turn(created.handle, call, "Hi Ada"))
        assert (status, words) == (200, "Spoken: Hi Ada")
        await line.runtime.drain()
        first = [row.text for row in await dialog(worker, created.handle) if row.role == "person"]
        assert first[0].startswith('[Ada picked up a phone call from Grace. Ada said first: "Hello')


async def test_a_greeting_is_kept_with_the_callers_first_words(line: Line, worker: Harness) -> None:
    created = await worker.create_agent(name="Ada")
    agent = created.handle
    await known_person(worker.db, agent, "+15550001", "Grace")
    call = unique("call")
    _, greeting = await say(line, turn(agent, call))
    # The platform's transcript: the agent spoke first, then the caller.
    heard = turn(agent, call)
    heard["messages"] += [
        {"role": "assistant", "content": greeting},
        {"role": "user", "content": "Hi, it's Grace"},
    ]
    status, _ = await say(line, heard)
    assert status == 200
    await line.runtime.drain()
    rows = await dialog(worker, agent)
    person_turns = [row.text for row in rows if row.role == "person"]
    # One conversation, opened by her first words, which say what the agent said before them.
    assert len({row.conversation_id for row in rows}) == 1 and len(person_turns) == 1
    assert person_turns[0] == (
        f'[Ada picked up a phone call from Grace. Ada said first: "{greeting}"]\nHi, it\'s Grace'
    )
    # Said once: a later turn carries no greeting.
    heard["messages"] += [
        {"role": "assistant", "content": "Spoken: Hi, it's Grace"},
        {"role": "user", "content": "Anyone there?"},
    ]
    await say(line, heard)
    await line.runtime.drain()
    later = [row.text for row in await dialog(worker, agent) if row.role == "person"]
    assert later[1:] == ["Anyone there?"]
