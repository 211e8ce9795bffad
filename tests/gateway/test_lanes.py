"""A reply goes before background work on the one local model, and pre-empts it."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest

from activities.gateway.lanes import ModelLanes, is_foreground
from activities.gateway.providers.local import LocalProvider
from schemas.models import ChatMessage, ModelBinding, ModelRequest, ProviderName, TaskType
from tests.fakes.provider_server import FakeProviderServer
from tests.harness import until


class Call:
    """A model call that records its starts and runs until released."""

    def __init__(self, name: str, log: list[str]) -> None:
        self.name, self.log = name, log
        self.release = asyncio.Event()
        self.started = asyncio.Event()

    async def __call__(self) -> str:
        self.log.append(f"{self.name} starts")
        self.started.set()
        await self.release.wait()
        self.log.append(f"{self.name} ends")
        return self.name


async def test_a_reply_preempts_the_background_call_which_runs_again_after() -> None:
    lanes, log = ModelLanes(), list[str]()
    emotion, reply = Call("emotion", log), Call("reply", log)
    background = asyncio.create_task(lanes.run(emotion, foreground=False))
    await emotion.started.wait()

    foreground = asyncio.create_task(lanes.run(reply, foreground=True))
    await reply.started.wait()
    emotion.started.clear()
    emotion.release.set()  # were it still running, it could end now: it must not
    reply.release.set()

    assert await foreground == "reply"
    assert await background == "emotion"
    assert log == ["emotion starts", "reply starts", "reply ends", "emotion starts", "emotion ends"]
    assert lanes.preemptions == 1


async def test_background_calls_wait_for_replies_and_run_one_at_a_time() -> None:
    lanes, log = ModelLanes(), list[str]()
    reply, memory, observe = Call("reply", log), Call("memory", log), Call("observe", log)
    foreground = asyncio.create_task(lanes.run(reply, foreground=True))
    await reply.started.wait()
    first = asyncio.create_task(lanes.run(memory, foreground=False))
    second = asyncio.create_task(lanes.run(observe, foreground=False))
    await asyncio.sleep(0)  # both get their chance to start, and must not
    assert log == ["reply starts"]

    reply.release.set()
    await foreground
    started = await next_started(memory, observe)
    assert sum(line.endswith("starts") for line in log) == 2  # one background call only
    started.release.set()
    other = observe if started is memory else memory
    await other.started.wait()
    other.release.set()

    assert {await first, await second} == {"memory", "observe"}
    assert lanes.preemptions == 0


async def next_started(*calls: Call) -> Call:
    waits = {asyncio.ensure_future(c.started.wait()): c for c in calls}
    done, pending = await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
    for task in pending:
        task.cancel()
    return waits[next(iter(done))]


async def test_a_background_caller_that_gives_up_stops_its_call_for_good() -> None:
    lanes, log = ModelLanes(), list[str]()
    memory = Call("memory", log)
    background = asyncio.create_task(lanes.run(memory, foreground=False))
    await memory.started.wait()

    background.cancel()
    with pytest.raises(asyncio.CancelledError):
        await background

    later = Call("later", log)
    later.release.set()
    assert await lanes.run(later, foreground=False) == "later"  # the lane is free again
    assert log == ["memory starts", "later starts", "later ends"]


def test_reply_tasks_are_foreground_and_the_rest_background() -> None:
    assert is_foreground(TaskType.RESPOND) and is_foreground(TaskType.DECIDE)
    assert not is_foreground(TaskType.EMOTION)
    assert not is_foreground(TaskType.SUMMARIZE)
    assert not is_foreground(TaskType.OBSERVE)


@pytest.fixture
async def local(fake: FakeProviderServer) -> AsyncIterator[LocalProvider]:
    provider = LocalProvider(base_url=fake.openai_url, timeout_seconds=30)
    yield provider
    await provider.aclose()


def ask(task: TaskType) -> ModelRequest:
    return ModelRequest(
        task=task, system="Be brief.", messages=[ChatMessage(role="user", content="Hello?")]
    )


async def test_the_local_server_hears_the_reply_while_a_long_emotion_call_is_stopped(
    local: LocalProvider, fake: FakeProviderServer
) -> None:
    binding = ModelBinding(provider=ProviderName.LOCAL, model="m", context_window=4096)
    fake.delay(60)  # the emotion call: a minute of work on the one model
    emotion = asyncio.create_task(local.complete(ask(TaskType.EMOTION), binding))
    await until(lambda: fake.requests, timeout=10)  # the server is working on it

    reply = await local.complete(ask(TaskType.RESPOND), binding)

    assert reply.text == fake.reply
    assert (await emotion).text == fake.reply  # sent again once the reply was done
    assert local.lanes.preemptions == 1
    assert [r.body["messages"][-1]["content"] for r in fake.requests] == ["Hello?"] * 3


async def test_background_work_waits_for_a_quiet_moment_after_a_reply() -> None:
    lanes, log = ModelLanes(quiet_s=0.5), list[str]()
    first, second, emotion = Call("reply 1", log), Call("reply 2", log), Call("emotion", log)
    first.release.set()
    assert await lanes.run(first, foreground=True) == "reply 1"
    # The emotion reading asks for the model at once; the next reply comes a moment later.
    background = asyncio.create_task(lanes.run(emotion, foreground=False))
    await asyncio.sleep(0.05)
    assert log == ["reply 1 starts", "reply 1 ends"]
    second.release.set()
    assert await lanes.run(second, foreground=True) == "reply 2"
    emotion.release.set()
    assert await background == "emotion"
    # The reply never waited on, nor pre-empted, a reading the server could not interrupt.
    assert log == [
        "reply 1 starts",
        "reply 1 ends",
        "reply 2 starts",
        "reply 2 ends",
        "emotion starts",
        "emotion ends",
    ]
    assert lanes.preemptions == 0
