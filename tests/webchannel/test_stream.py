"""The channel's server-sent events: deltas, the reply once, unprompted messages, resuming.

The stream is read over real HTTP from uvicorn; replies come from the outbox, so a worker
killed mid-reply and replaced is seen by the client as one reply.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import UTC, datetime
from pathlib import Path

from sqlmodel import col, func, select
from temporalio.client import Client

from activities.gateway.providers.scripted import ScriptRule
from schemas.delivery import DeliveryStatus
from schemas.ids import new_ulid
from store.queries.delivery import get_message, record_delivered
from store.queries.runtime import add_outbox
from store.tables import PromptRow
from temporal import inbox
from tests.harness import Harness, Stack, running_worker, unique, until
from tests.webchannel.web import Served, SseEvent, serving, sse_events
from tests.workflows.test_faults import WorkerProcess, worker_processes  # noqa: F401  (fixture)


@asynccontextmanager
async def following(
    web: Served, handle: str, channel: str, *, last_event_id: str | None = None
) -> AsyncIterator[list[SseEvent]]:
    """The channel's events as they arrive, once the stream is listening."""
    seen: list[SseEvent] = []
    headers = {"Last-Event-ID": last_event_id} if last_event_id else {}
    async with web.http() as http:

        async def read() -> None:
            url = f"/v1/agents/{handle}/channels/{channel}/stream"
            async with http.stream("GET", url, headers=headers) as response:
                assert response.status_code == 200, await response.aread()
                assert response.headers["content-type"].startswith("text/event-stream")
                async for item in sse_events(response):
                    seen.append(item)

        reader = asyncio.create_task(read())
        await until(lambda: reader.done() or any(e.kind == "comment" for e in seen))
        if reader.done():
            reader.result()
        try:
            yield seen
        finally:
            reader.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await reader


def kinds(events: list[SseEvent], kind: str) -> list[SseEvent]:
    return [e for e in events if e.kind == kind]


async def post(web: Served, handle: str, text: str, channel: str = "support") -> str:
    event_id = new_ulid()
    async with web.http() as http:
        posted = await http.post(
            f"/v1/agents/{handle}/messages",
            json={
                "event_id": event_id,
                "channel": channel,
                "speaker": {"speaker_id": "u-17"},
                "text": text,
                "stream": True,
            },
        )
    assert posted.status_code == 202, posted.text
    return event_id


async def test_deltas_replies_and_unprompted_messages_and_resuming(
    client: Client, stack: Stack, tmp_path: Path
) -> None:
    rules = [ScriptRule(task="respond", reply="echo: {last}")]
    async with running_worker(client, stack, rules=rules) as worker:
        agent = await worker.create_agent()
        settings = stack.settings(home=tmp_path, task_queue=worker.task_queue)
        async with serving(settings, client) as web:
            async with following(web, agent.handle, "support") as events:
                await post(web, agent.handle, "first")
                await until(lambda: kinds(events, "reply"))
                # The agent says something on its own on this channel (as a reminder would).
                async with worker.db.session() as session:
                    await add_outbox(
                        session,
                        message_id=new_ulid(),
                        activation_id=new_ulid(),
                        agent=agent.handle,
                        channel_key=web.channel_key("support"),
                        conversation_id=None,
                        text_="a reminder: stand-up at ten",
                        created_at=datetime.now(UTC),
                        unprompted=True,
                    )
                await until(lambda: kinds(events, "unprompted"))
                await post(web, agent.handle, "elsewhere", channel="other")  # not this channel
                await post(web, agent.handle, "second")
                await until(lambda: len(kinds(events, "reply")) == 2)

            replies = kinds(events, "reply")
            assert [r.data["text"] for r in replies] == ["echo: first", "echo: second"]
            assert all(r.id == r.data["message_id"] for r in replies)
            assert "".join(d.data["text"] for d in kinds(events, "delta")).startswith("echo: first")
            assert [u.data["text"] for u in kinds(events, "unprompted")] == [
                "a reminder: stand-up at ten"
            ]

            # Reconnecting after the first reply gives what came since, each once.
            async with following(
                web, agent.handle, "support", last_event_id=replies[0].id
            ) as resumed:
                await until(lambda: len(kinds(resumed, "reply")) == 1)
                await post(web, agent.handle, "third")
                await until(lambda: len(kinds(resumed, "reply")) == 2)
            texts = [e.data["text"] for e in resumed if e.kind in {"reply", "unprompted"}]
            assert texts == ["a reminder: stand-up at ten", "echo: second", "echo: third"]


async def test_the_stream_survives_a_worker_restart_and_shows_the_reply_once(
    client: Client,
    stack: Stack,
    worker_processes: list[WorkerProcess],  # noqa: F811
    tmp_path: Path,
) -> None:
    # The model takes 3 s, so the kill lands while the reply is being generated.
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"rules": [{"delay_ms": 3000, "reply": "survived: {last}"}]}))
    queue = unique("tq-web-kill")
    first = WorkerProcess(stack, queue, script, tmp_path / "worker1.log")
    second = WorkerProcess(stack, queue, script, tmp_path / "worker2.log")
    worker_processes.extend([first, second])

    # An in-process worker only creates the agent; the real ones serve `queue`.
    async with running_worker(client, stack) as harness:
        agent = await harness.create_agent()
        first.start()
        await until(lambda: inbox.has_pollers(client, queue))
        settings = stack.settings(task_queue=queue)
        async with (
            serving(settings, client) as web,
            following(web, agent.handle, "support") as events,
        ):
            event_id = await post(web, agent.handle, "are you still there?")
            await until(lambda: prompt_stored(harness, agent.handle))
            first.kill()
            second.start()
            await until(lambda: kinds(events, "reply"), timeout=120)
            # A later message's reply comes after any repeat of the first would have.
            await post(web, agent.handle, "and now?")
            await until(lambda: len(kinds(events, "reply")) >= 2, timeout=120)
            async with web.http() as http:
                marker = (await http.get(f"/v1/agents/{agent.handle}/markers/{event_id}")).json()

    texts = [e.data["text"] for e in kinds(events, "reply")]
    assert texts == ["survived: are you still there?", "survived: and now?"]
    assert marker["outcome"] == "spoke" and marker["text"] == "survived: are you still there?"


async def prompt_stored(harness: Harness, handle: str) -> bool:
    """Context assembly stored the prompt: generation is under way."""
    async with harness.db.session() as session:
        rows = await session.exec(
            select(func.count())
            .select_from(PromptRow)
            .where(col(PromptRow.system).contains(f"handle: {handle}"))
        )
        return int(rows.one()) > 0


async def test_a_bad_last_event_id_or_channel_is_named(
    client: Client, stack: Stack, tmp_path: Path
) -> None:
    async with running_worker(client, stack) as worker:
        agent = await worker.create_agent()
        settings = stack.settings(home=tmp_path, task_queue=worker.task_queue)
        async with serving(settings, client) as web, web.http() as http:
            bad_id = await http.get(
                f"/v1/agents/{agent.handle}/channels/support/stream",
                headers={"Last-Event-ID": "yesterday"},
            )
            bad_channel = await http.get(f"/v1/agents/{agent.handle}/channels/%20/stream")
    assert bad_id.status_code == 400
    assert bad_id.json()["detail"].startswith("Last-Event-ID 'yesterday' is not a ULID")
    assert bad_channel.status_code == 400
    assert bad_channel.json()["detail"].startswith("channel ' ': ")


async def test_a_message_kept_for_pickup_is_shown_on_connect_and_then_delivered(
    client: Client, stack: Stack, tmp_path: Path
) -> None:
    async with running_worker(client, stack) as worker:
        agent = await worker.create_agent()
        message_id = new_ulid()
        settings = stack.settings(home=tmp_path, task_queue=worker.task_queue)
        async with serving(settings, client) as web:
            async with worker.db.session() as session:
                await add_outbox(
                    session,
                    message_id=message_id,
                    activation_id=new_ulid(),
                    agent=agent.handle,
                    channel_key=web.channel_key("support"),
                    conversation_id=None,
                    text_="while you were away: the build is green",
                    created_at=datetime.now(UTC),
                    unprompted=True,
                )
                # Its delivery found nobody connected: the pull adapter keeps it for pickup.
                await record_delivered(
                    session,
                    message_id=message_id,
                    status=DeliveryStatus.AWAITING_PICKUP,
                    attempts=1,
                    external_id=None,
                    at=datetime.now(UTC),
                )
            async with following(web, agent.handle, "support") as events:
                await until(lambda: kinds(events, "unprompted"))

                async def delivered() -> bool:
                    async with worker.db.session() as session:
                        row = await get_message(session, message_id=message_id)
                    return row is not None and row.status == DeliveryStatus.DELIVERED

                await until(delivered)
            # Shown once: the next reader is not shown it again.
            async with following(web, agent.handle, "support") as again:
                await post(web, agent.handle, "anything new?")
                await until(lambda: kinds(again, "reply"))
    assert [e.id for e in kinds(events, "unprompted")] == [message_id]
    assert kinds(again, "unprompted") == []
