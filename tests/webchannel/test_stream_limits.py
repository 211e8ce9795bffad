"""Open event streams cost the database nothing, and are capped per token and in total.

Every stream of a ``persyn serve`` process shares one LISTEN connection and borrows a pooled
connection only for a read, so 500 streams asked for at once leave PostgreSQL's backends where
they were and the worker answering. Past a token's cap a stream is refused with 429, past the
service's with 503, each with ``Retry-After``. Real uvicorn, Temporal, PostgreSQL and worker.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path

import httpx
from temporalio.client import Client

from schemas.ids import new_ulid
from schemas.settings import Settings
from store.sql import execute
from tests.harness import Harness, Stack, running_worker, until
from tests.webchannel.web import Served, SseEvent, serving, sse_events
from usecases.tokens import create_token


@dataclass
class Streams:
    """What asking for many streams at once gave: the ones open and the refusals."""

    opened: dict[int, list[list[SseEvent]]] = field(default_factory=dict)
    """By token index: the events each open stream has received so far."""
    refused: list[httpx.Response] = field(default_factory=list)

    @property
    def open_count(self) -> int:
        return sum(len(found) for found in self.opened.values())


@asynccontextmanager
async def many_streams(
    web: Served, handle: str, tokens: list[str], *, each: int, channel: str = "support"
) -> AsyncIterator[Streams]:
    """Ask for ``each`` streams per token, all at once; held open until the block ends."""
    result = Streams()
    limits = httpx.Limits(max_connections=None, max_keepalive_connections=0)
    url = f"/v1/agents/{handle}/channels/{channel}/stream"
    async with httpx.AsyncClient(base_url=web.base_url, limits=limits, timeout=120) as http:

        async def one(index: int, token: str, answered: asyncio.Event) -> None:
            headers = {"Authorization": f"Bearer {token}"}
            try:
                async with http.stream("GET", url, headers=headers) as response:
                    if response.status_code != 200:
                        await response.aread()
                        result.refused.append(response)
                        return
                    seen: list[SseEvent] = []
                    result.opened.setdefault(index, []).append(seen)
                    async for item in sse_events(response):
                        seen.append(item)
                        answered.set()  # the first line says it is listening
            finally:
                answered.set()

        tasks: list[asyncio.Task[None]] = []
        answers: list[asyncio.Event] = []
        for index, token in enumerate(tokens):
            for _ in range(each):
                answered = asyncio.Event()
                answers.append(answered)
                tasks.append(asyncio.create_task(one(index, token, answered)))
        await asyncio.wait_for(asyncio.gather(*(a.wait() for a in answers)), timeout=120)
        try:
            yield result
        finally:
            for task in tasks:
                task.cancel()
            for task in tasks:
                with contextlib.suppress(asyncio.CancelledError, httpx.HTTPError):
                    await task


async def backends(worker: Harness) -> int:
    """Connections PostgreSQL serves now, every client's."""
    async with worker.db.session() as session:
        found = await execute(session, "SELECT count(*) FROM pg_stat_activity")
        return int(found.scalar_one())


async def tokens_for(settings: Settings, handle: str, count: int) -> list[str]:
    made = []
    for index in range(count):
        _, plain = await create_token(settings=settings, name=f"load-{index}", agents=[handle])
        made.append(plain)
    return made


async def test_500_streams_leave_the_database_and_the_worker_alone(
    client: Client, stack: Stack, tmp_path: Path
) -> None:
    async with running_worker(client, stack) as worker:
        agent = await worker.create_agent()
        settings = stack.settings(home=tmp_path, task_queue=worker.task_queue)
        # The defaults: 20 streams a token, 200 in all.
        async with serving(settings, client) as web:
            tokens = await tokens_for(settings, agent.handle, 25)
            before = await backends(worker)
            async with many_streams(web, agent.handle, tokens, each=20) as streams:
                during = await backends(worker)
                # The worker still answers, and every open stream of that token hears it.
                poster = next(iter(streams.opened))
                async with Served(web.base_url, tokens[poster]).http() as http:
                    posted = await http.post(
                        f"/v1/agents/{agent.handle}/messages",
                        json={
                            "event_id": new_ulid(),
                            "channel": "support",
                            "speaker": {"speaker_id": "u-1"},
                            "text": "still there?",
                        },
                        headers={"Prefer": "wait=60"},
                    )
                listeners = streams.opened[poster]
                await until(lambda: all(any(e.kind == "reply" for e in s) for s in listeners))

    assert streams.open_count == 200
    assert len(streams.refused) == 300
    assert {r.status_code for r in streams.refused} == {503}
    assert all(r.headers["Retry-After"].isdigit() for r in streams.refused)
    assert "200 streams open" in streams.refused[0].json()["detail"]
    # One listener and the service's pool at most: not a connection or two per stream.
    assert during - before <= 21, (before, during)
    assert posted.status_code == 200, posted.text
    assert posted.json()["marker"]["outcome"] == "spoke"


async def test_a_token_past_its_cap_is_told_to_wait_and_a_closed_stream_frees_its_place(
    client: Client, stack: Stack, tmp_path: Path
) -> None:
    async with running_worker(client, stack) as worker:
        agent = await worker.create_agent()
        settings = stack.settings(home=tmp_path, task_queue=worker.task_queue)
        async with serving(settings, client, streams_per_token=3) as web:
            first, other = await tokens_for(settings, agent.handle, 2)
            # Another token's streams are not counted against the first one's.
            async with (
                many_streams(web, agent.handle, [first], each=4) as full,
                many_streams(web, agent.handle, [other], each=1) as beside,
            ):
                pass

            async def places_freed() -> bool:
                # The first token's streams were closed: its places come free as the service
                # sees each client leave.
                async with many_streams(web, agent.handle, [first], each=3) as again:
                    return again.open_count == 3 and not again.refused

            await until(places_freed)

    assert full.open_count == 3
    [refused] = full.refused
    assert refused.status_code == 429
    assert refused.headers["Retry-After"].isdigit()
    assert refused.json()["detail"].startswith("token ")
    assert beside.open_count == 1 and not beside.refused
