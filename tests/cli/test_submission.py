"""Submitting from the terminal: no worker is said in one line, never waited on in silence."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from temporalio.client import Client

from cli.common import UserError
from cli.submission import submit
from schemas.events import Outcome
from temporal.inbox import has_pollers
from tests.harness import Stack, event, running_worker, unique, until


async def test_send_refuses_at_once_when_no_worker_serves(
    client: Client, stack: Stack, tmp_path: Path
) -> None:
    settings = stack.settings(home=tmp_path, task_queue=unique("tq-nobody"))
    ev = event("hello?")

    with pytest.raises(UserError) as refused:
        await asyncio.wait_for(submit(client, settings, handle="ada", event=ev), 10)

    assert str(refused.value) == (
        f"no worker is serving task queue {settings.task_queue!r}: run `persyn up`, "
        f"then resend with --event-id {ev.event_id}"
    )


async def test_chat_says_so_once_and_the_message_waits_for_a_worker(
    client: Client, stack: Stack, tmp_path: Path
) -> None:
    settings = stack.settings(home=tmp_path, task_queue=unique("tq-later"))
    notices: list[str] = []
    async with running_worker(client, stack, task_queue=unique("tq-agent")) as other:
        agent = await other.create_agent()
    ev = event("are you there?")

    waiting = asyncio.create_task(
        submit(client, settings, handle=agent.handle, event=ev, on_no_worker=notices.append)
    )
    await until(lambda: notices)
    assert notices == [f"no worker is serving task queue {settings.task_queue!r}: run `persyn up`"]
    assert not waiting.done()

    async with running_worker(client, stack, task_queue=settings.task_queue):
        receipt = await asyncio.wait_for(waiting, 60)

    assert receipt.marker is not None and receipt.marker.outcome is Outcome.SPOKE
    assert receipt.marker.text == "are you there?"
    assert len(notices) == 1


class Restarting:
    """The presence a supervisor gives while it restarts a worker: away, but with a grace."""

    def __init__(self, task_queue: str) -> None:
        self.task_queue = task_queue
        self.looked = asyncio.Event()

    async def serving(self, client: Client) -> bool:
        self.looked.set()
        return await has_pollers(client, self.task_queue)

    def grace(self) -> float:
        return 30.0  # as while a supervisor runs


async def test_a_supervised_worker_being_restarted_gets_a_grace(
    client: Client, stack: Stack, tmp_path: Path
) -> None:
    settings = stack.settings(home=tmp_path, task_queue=unique("tq-restarting"))
    async with running_worker(client, stack, task_queue=unique("tq-agent")) as other:
        agent = await other.create_agent()
    presence = Restarting(settings.task_queue)

    waiting = asyncio.create_task(
        submit(client, settings, handle=agent.handle, event=event("back soon?"), presence=presence)
    )
    await presence.looked.wait()  # it found no worker, and waits for one instead of refusing
    async with running_worker(client, stack, task_queue=settings.task_queue):
        receipt = await asyncio.wait_for(waiting, 60)

    assert receipt.marker is not None and receipt.marker.text == "back soon?"
