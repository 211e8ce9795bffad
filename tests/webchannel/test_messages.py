"""Posting to the web channel: idempotent by event ID, tokens checked, hostile bodies refused.

A real Temporal dev server, PostgreSQL and worker (scripted echo model); the service runs under
uvicorn and is called over HTTP.
"""

from __future__ import annotations

import math
import time
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from sqlmodel import func, select
from temporalio.client import Client

from schemas.ids import new_ulid
from store.tables import DialogTurnRow, OutboxRow
from temporal import inbox
from tests.harness import Harness, Stack, running_worker, unique, until
from tests.webchannel.web import Served, serving
from usecases.tokens import create_token, revoke_token


@pytest.fixture
async def worker(client: Client, stack: Stack) -> AsyncIterator[Harness]:
    async with running_worker(client, stack) as harness:
        yield harness


@pytest.fixture
async def web(
    client: Client, stack: Stack, worker: Harness, tmp_path: Path
) -> AsyncIterator[Served]:
    # A home of its own: no other test's worker beacons there, so Temporal's pollers count.
    settings = stack.settings(home=tmp_path, task_queue=worker.task_queue)
    async with serving(settings, client, max_body_bytes=4096) as served:
        yield served


def message(
    text: str, *, event_id: str | None = None, channel: str = "support"
) -> dict[str, object]:
    body: dict[str, object] = {
        "channel": channel,
        "speaker": {"speaker_id": "u-17", "display_name": "Grace"},
        "text": text,
    }
    if event_id is not None:
        body["event_id"] = event_id
    return body


async def turns(worker: Harness, handle: str) -> int:
    async with worker.db.session() as session:
        rows = await session.exec(
            select(func.count()).select_from(DialogTurnRow).where(DialogTurnRow.agent == handle)
        )
        return int(rows.one())


async def test_the_same_event_id_posted_twice_gets_one_reply(worker: Harness, web: Served) -> None:
    agent = await worker.create_agent()
    event_id = new_ulid()
    async with web.http() as http:
        first = await http.post(
            f"/v1/agents/{agent.handle}/messages", json=message("hi", event_id=event_id)
        )
        second = await http.post(
            f"/v1/agents/{agent.handle}/messages", json=message("hi", event_id=event_id)
        )
        assert first.status_code == 202, first.text
        assert second.status_code == 202, second.text
        receipt = first.json()
        assert receipt["event_id"] == event_id and receipt["status"] == "accepted"
        assert receipt["marker_url"] == f"/v1/agents/{agent.handle}/markers/{event_id}"

        async def marker() -> bool:
            return (await http.get(receipt["marker_url"])).status_code == 200

        await until(marker)
        answer = (await http.get(receipt["marker_url"])).json()
        # Asked to wait, a third post of the same event is answered from the same marker.
        third = await http.post(
            f"/v1/agents/{agent.handle}/messages",
            json=message("hi", event_id=event_id),
            headers={"Prefer": "wait=30"},
        )
    assert answer["outcome"] == "spoke" and answer["text"] == "hi"
    assert third.status_code == 200 and third.json()["marker"] == answer
    assert third.headers["server-timing"].startswith("agent;dur=")
    async with worker.db.session() as session:
        replies = (
            await session.exec(select(OutboxRow).where(OutboxRow.agent == agent.handle))
        ).all()
    assert len(replies) == 1
    assert await turns(worker, agent.handle) == 2  # one message, one reply


async def test_the_same_event_id_for_another_text_is_a_conflict(
    worker: Harness, web: Served
) -> None:
    agent = await worker.create_agent()
    event_id = new_ulid()
    async with web.http() as http:
        first = await http.post(
            f"/v1/agents/{agent.handle}/messages",
            json=message("one", event_id=event_id),
            headers={"Prefer": "wait=30"},
        )
        other = await http.post(
            f"/v1/agents/{agent.handle}/messages", json=message("two", event_id=event_id)
        )
    assert first.status_code == 200
    assert other.status_code == 409
    assert "already used for a different event" in other.json()["detail"]


@pytest.mark.parametrize(
    ("token", "detail"),
    [
        ("", "missing bearer token"),
        ("persyn_not-a-real-token", "the bearer token is unknown or revoked"),
    ],
)
async def test_a_bad_token_gets_401_and_nothing_is_stored(
    worker: Harness, web: Served, token: str, detail: str
) -> None:
    agent = await worker.create_agent()
    await inbox.start_agent(worker.client, handle=agent.handle, task_queue=worker.task_queue)
    event_id = new_ulid()
    async with web.http(token) as http:
        posted = await http.post(
            f"/v1/agents/{agent.handle}/messages", json=message("let me in", event_id=event_id)
        )
        marker = await http.get(f"/v1/agents/{agent.handle}/markers/{event_id}")
        stream = await http.get(f"/v1/agents/{agent.handle}/channels/support/stream")
    assert posted.status_code == 401 and posted.json()["detail"].startswith(detail)
    assert posted.headers["www-authenticate"] == "Bearer"
    assert marker.status_code == 401 and stream.status_code == 401
    answer = await worker.client.get_workflow_handle(f"agent/{agent.handle}").query(
        "marker", {"event_id": event_id}
    )
    assert answer == {"marker": None, "pending": False}
    assert await turns(worker, agent.handle) == 0


async def test_a_revoked_or_foreign_token_is_refused(
    worker: Harness, web: Served, stack: Stack, tmp_path: Path
) -> None:
    agent = await worker.create_agent()
    other = await worker.create_agent()
    settings = stack.settings(home=tmp_path, task_queue=worker.task_queue)
    record, scoped = await create_token(settings=settings, name="scoped", agents=[other.handle])
    async with web.http(scoped) as http:
        foreign = await http.post(f"/v1/agents/{agent.handle}/messages", json=message("hi"))
        await revoke_token(settings=settings, token_id=record.token_id)
        revoked = await http.post(f"/v1/agents/{other.handle}/messages", json=message("hi"))
    assert foreign.status_code == 403
    assert foreign.json()["detail"] == (
        f"token {record.token_id} may not talk to agent {agent.handle!r}"
    )
    assert revoked.status_code == 401
    assert await turns(worker, agent.handle) == 0 and await turns(worker, other.handle) == 0


async def test_a_token_over_its_rate_is_refused_before_anything_is_stored(
    worker: Harness, client: Client, stack: Stack, tmp_path: Path
) -> None:
    agent = await worker.create_agent()
    settings = stack.settings(home=tmp_path, task_queue=worker.task_queue)
    events = [new_ulid() for _ in range(3)]
    async with (
        serving(settings, client, messages_per_minute=1, burst=2) as limited,
        limited.http() as http,
    ):
        began = time.monotonic()
        posted = [
            await http.post(
                f"/v1/agents/{agent.handle}/messages", json=message("hi", event_id=event_id)
            )
            for event_id in events
        ]
        took = time.monotonic() - began
        refused_marker = await http.get(f"/v1/agents/{agent.handle}/markers/{events[2]}")
    assert [r.status_code for r in posted] == [202, 202, 429], posted[-1].text
    refused = posted[2]
    # The bucket refills while the first two are posted: the wait is a minute less that time.
    wait = int(refused.headers["Retry-After"])
    assert math.ceil(60 - took) <= wait <= 60
    detail = refused.json()["detail"]
    assert detail.startswith("token ") and detail.endswith(
        f"is over its message rate (1 a minute, 2 at once): resend the message in {wait} s"
    )
    # Never submitted: the agent (running since the first two) holds no marker, nor is it
    # answering it, and no turn was stored for it.
    assert refused_marker.status_code == 404
    assert refused_marker.json()["detail"] == (
        f"no marker for event {events[2]}: never received, or expired"
    )

    async def stored(event_id: str) -> bool:  # a person's turn has its event's ID
        async with worker.db.session() as session:
            return await session.get(DialogTurnRow, event_id) is not None

    await until(lambda: stored(events[0]))
    assert not await stored(events[2])


@pytest.mark.parametrize(
    ("body", "status", "detail"),
    [
        (b"x" * 5000, 413, "the body is over 4096 bytes (at least 5000): send a shorter message"),
        (b'{"channel": "a\x00b"}', 400, "the body contains a NUL byte at offset 14"),
        (
            b'{"text": "caf\xe9"}',
            400,
            "the body is not valid UTF-8 (byte 0xe9 at offset 13): encode it as UTF-8",
        ),
        (b'{"text": ', 400, "the body is not JSON (Expecting value at line 1 column 10)"),
        (b"", 400, "the body is empty: send one JSON object"),
        (b"[1, 2]", 400, "the body is JSON but not an object (list)"),
        (
            b'{"channel": "c", "speaker": {"speaker_id": "u"}, "text": "a\\u0000b"}',
            422,
            "text: message contains a NUL character",
        ),
        (
            b'{"channel": "c", "speaker": {"speaker_id": "u"}, "text": "hi", "colour": 1}',
            422,
            "colour: Extra inputs are not permitted",
        ),
        (
            b'{"event_id": "nope", "channel": "c", "speaker": {"speaker_id": "u"}, "text": "hi"}',
            400,
            "event id 'nope' is not a ULID",
        ),
    ],
    ids=[
        "oversized",
        "nul",
        "not-utf8",
        "bad-json",
        "empty",
        "not-object",
        "nul-escape",
        "unknown-field",
        "bad-event-id",
    ],
)
async def test_hostile_bodies_get_a_4xx_naming_the_problem_and_nothing_is_stored(
    worker: Harness, web: Served, body: bytes, status: int, detail: str
) -> None:
    agent = await worker.create_agent()
    async with web.http() as http:
        refused = await http.post(
            f"/v1/agents/{agent.handle}/messages",
            content=body,
            headers={"Content-Type": "application/json"},
        )
    assert refused.status_code == status, refused.text
    assert refused.json()["detail"].startswith(detail), refused.json()
    assert "\n" not in refused.json()["detail"]
    assert await turns(worker, agent.handle) == 0


async def test_bad_handles_and_event_ids_are_named(worker: Harness, web: Served) -> None:
    agent = await worker.create_agent()
    async with web.http() as http:
        bad_handle = await http.post("/v1/agents/Not_A_Handle/messages", json=message("hi"))
        unknown = await http.post("/v1/agents/nobody-here/messages", json=message("hi"))
        bad_event = await http.get(f"/v1/agents/{agent.handle}/markers/123")
        unknown_event = new_ulid()
        never = await http.get(f"/v1/agents/{agent.handle}/markers/{unknown_event}")
    assert bad_handle.status_code == 400
    assert bad_handle.json()["detail"].startswith("agent handle 'Not_A_Handle' is invalid")
    assert unknown.status_code == 404
    assert unknown.json()["detail"] == "there is no agent 'nobody-here'"
    assert bad_event.status_code == 400
    assert bad_event.json()["detail"].startswith("event id '123' is not a ULID")
    assert never.status_code == 404
    # The same line as for another tenant's event: a marker read tells nothing of others.
    assert never.json()["detail"] == (
        f"no marker for event {unknown_event}: never received, or expired"
    )


async def test_the_openapi_document_lists_every_endpoint(web: Served) -> None:
    async with web.http() as http:
        document = (await http.get("/openapi.json")).json()
        page = await http.get("/")
    assert set(document["paths"]) == {
        "/v1/agents/{handle}/messages",
        "/v1/agents/{handle}/markers/{event_id}",
        "/v1/agents/{handle}/channels/{channel}/stream",
        "/v1/agents/{handle}/media",
        "/v1/agents/{handle}/approvals",
        "/v1/agents/{handle}/approvals/{approval_id}",
        "/voice/v1/agents/{handle}/chat/completions",
        "/voice/v1/agents/{handle}/events",
    }
    post = document["paths"]["/v1/agents/{handle}/messages"]["post"]
    assert "requestBody" in post and {"202", "401", "413", "422"} <= set(post["responses"])
    assert page.status_code == 200 and "Persyn web chat" in page.text


async def test_no_worker_is_a_503_naming_the_queue_and_the_event(
    client: Client, stack: Stack, worker: Harness, tmp_path: Path
) -> None:
    agent = await worker.create_agent()
    settings = stack.settings(home=tmp_path, task_queue=unique("tq-nobody"))
    event_id = new_ulid()
    async with serving(settings, client) as web, web.http() as http:
        refused = await http.post(
            f"/v1/agents/{agent.handle}/messages", json=message("anyone?", event_id=event_id)
        )
    assert refused.status_code == 503
    assert refused.headers["retry-after"] == "5"
    assert refused.json()["detail"] == (
        f"no worker is serving task queue {settings.task_queue!r}: "
        f"retry later with the same event_id {event_id}"
    )
    assert await turns(worker, agent.handle) == 0
