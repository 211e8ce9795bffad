"""The web channel under hostile or careless clients: every answer is JSON, nothing hangs.

Deep bodies are refused before any parser recurses, a busy agent is a 503 with a
``Retry-After``, half-sent requests are closed on a deadline, channel names follow the one
rule the schemas publish, and even a bug answers ``{"detail": ...}``.
"""

from __future__ import annotations

import asyncio
import socket
import time
from collections.abc import AsyncIterator
from pathlib import Path
from select import select as readable

import httpx
import pytest
from sqlmodel import func, select
from temporalio.client import Client

from activities.gateway.providers.scripted import ScriptRule
from schemas.ids import new_ulid
from store.tables import DialogTurnRow
from tests.harness import Harness, Stack, running_worker
from tests.webchannel.web import Served, serving
from webchannel.app import create_app
from webchannel.body import MAX_DEPTH

HEADER_TIMEOUT_S = 1.0
BODY_TIMEOUT_S = 1.0


@pytest.fixture
async def worker(client: Client, stack: Stack) -> AsyncIterator[Harness]:
    async with running_worker(client, stack) as harness:
        yield harness


@pytest.fixture
async def web(
    client: Client, stack: Stack, worker: Harness, tmp_path: Path
) -> AsyncIterator[Served]:
    settings = stack.settings(home=tmp_path, task_queue=worker.task_queue)
    async with serving(
        settings, client, header_timeout=HEADER_TIMEOUT_S, body_timeout=BODY_TIMEOUT_S
    ) as served:
        yield served


def message(channel: str = "support", **extra: object) -> dict[str, object]:
    return {"channel": channel, "speaker": {"speaker_id": "u-17"}, "text": "hi", **extra}


async def turns(worker: Harness, handle: str) -> int:
    async with worker.db.session() as session:
        rows = await session.exec(
            select(func.count()).select_from(DialogTurnRow).where(DialogTurnRow.agent == handle)
        )
        return int(rows.one())


async def test_a_deep_body_is_refused_before_it_is_parsed(worker: Harness, web: Served) -> None:
    agent = await worker.create_agent()
    url = f"/v1/agents/{agent.handle}/messages"
    deep = b'{"channel": "c", "x": ' + b"[" * 10_000 + b"]" * 10_000 + b"}"
    # Brackets inside a string are text, not nesting.
    quoted = b'{"channel": "c", "speaker": {"speaker_id": "u"}, "text": "' + b"[" * 5000 + b'"}'
    within = b'{"channel": "c", "x": ' + b"[" * (MAX_DEPTH - 1) + b"]" * (MAX_DEPTH - 1) + b"}"
    async with web.http() as http:
        headers = {"Content-Type": "application/json"}
        refused = await http.post(url, content=deep, headers=headers)
        text = await http.post(url, content=quoted, headers=headers)
        shallow = await http.post(url, content=within, headers=headers)
    assert refused.status_code == 400, refused.text
    assert refused.json()["detail"] == (
        f"the body is nested more than {MAX_DEPTH} levels deep (at offset {21 + MAX_DEPTH}): "
        "send a flat JSON object"
    )
    assert text.status_code == 202, text.text
    # As deep as allowed: parsed, and refused for what it holds, not for its depth.
    assert shallow.status_code == 422, shallow.text
    assert shallow.json()["detail"].startswith("speaker: Field required")


@pytest.mark.parametrize(
    ("channel", "shown"),
    [
        ("../../x", "starts with a dot"),
        ("x\ny", "'\\n'"),
        ("a/b", "'/'"),
        ("..", "starts with a dot"),
    ],
    ids=["traversal", "line-break", "slash", "dots"],
)
async def test_a_channel_name_outside_the_rule_is_refused(
    worker: Harness, web: Served, channel: str, shown: str
) -> None:
    agent = await worker.create_agent()
    async with web.http() as http:
        refused = await http.post(f"/v1/agents/{agent.handle}/messages", json=message(channel))
    assert refused.status_code == 422, refused.text
    detail = refused.json()["detail"]
    assert detail.startswith(f"channel: channel name {channel!r} "), detail
    assert shown in detail and "ASCII letters, digits and _ - . : @ + ~" in detail
    assert await turns(worker, agent.handle) == 0


async def test_a_flag_is_true_or_false_only(worker: Harness, web: Served) -> None:
    agent = await worker.create_agent()
    async with web.http() as http:
        refused = await http.post(f"/v1/agents/{agent.handle}/messages", json=message(stream=0))
    assert refused.status_code == 422, refused.text
    assert refused.json()["detail"] == "stream: Input should be a valid boolean"


async def test_every_name_the_rule_allows_has_a_working_stream_url(
    worker: Harness, web: Served
) -> None:
    agent = await worker.create_agent()
    async with web.http() as http:
        posted = await http.post(
            f"/v1/agents/{agent.handle}/messages", json=message("team.room-1:a@b+c~d_e")
        )
        assert posted.status_code == 202, posted.text
        async with http.stream("GET", posted.json()["stream_url"]) as stream:
            assert stream.status_code == 200
            assert (await anext(stream.aiter_lines())).startswith(": listening")


async def test_every_refusal_and_failure_is_json(worker: Harness, web: Served) -> None:
    agent = await worker.create_agent()
    async with web.http() as http:
        nowhere = await http.get("/v1/nowhere")
        wrong_method = await http.delete(f"/v1/agents/{agent.handle}/messages")
    assert nowhere.status_code == 404
    assert nowhere.json() == {
        "detail": "there is no /v1/nowhere: the API is described at /openapi.json"
    }
    assert wrong_method.status_code == 405
    assert wrong_method.json() == {
        "detail": f"DELETE is not allowed on /v1/agents/{agent.handle}/messages: use POST"
    }


async def test_a_bug_answers_500_as_json(stack: Stack, tmp_path: Path) -> None:
    app = create_app(stack.settings(home=tmp_path))

    @app.get("/broken")
    async def broken() -> None:
        raise RuntimeError("a bug")

    transport = httpx.ASGITransport(app=app, raise_app_exceptions=False)
    async with httpx.AsyncClient(transport=transport, base_url="http://web") as http:
        answer = await http.get("/broken")
    assert answer.status_code == 500
    assert answer.headers["content-type"] == "application/json"
    assert answer.json() == {
        "detail": "the service failed on this request: retry it, and report it if it persists"
    }


def _talk(port: int, opening: bytes, dribble: bytes = b"") -> tuple[bytes, float, int]:
    """Send ``opening``, then ``dribble`` a byte at a time, until the server answers.

    Returns what the server sent until it closed, the seconds from the first byte to its
    answer, and how many dribbled bytes went out before it. Stops writing as soon as the
    server has something to say, so no write meets a closed connection.
    """
    with socket.create_connection(("127.0.0.1", port)) as sock:
        started = time.monotonic()
        sock.sendall(opening)
        sent = 0
        deadline = started + HEADER_TIMEOUT_S + 5
        while not readable([sock], [], [], HEADER_TIMEOUT_S / 20)[0]:
            if time.monotonic() > deadline:
                raise AssertionError("the server never answered")
            if sent < len(dribble):
                sock.sendall(dribble[sent : sent + 1])
                sent += 1
        answered = time.monotonic() - started
        sock.settimeout(5)
        received = b""
        while chunk := sock.recv(4096):
            received += chunk
    return received, answered, sent


async def test_half_sent_requests_are_closed_on_the_header_deadline(web: Served) -> None:
    port = int(web.base_url.rsplit(":", 1)[1])
    half = b"POST /v1/agents/ada/messages HTTP/1.1\r\nHost: web\r\nContent-Le"
    slow_line = b"GET /v1/agents/ada/markers/" + b"x" * 2_000  # never ends in time
    silent, cut, dribbled = await asyncio.gather(
        asyncio.to_thread(_talk, port, b""),
        asyncio.to_thread(_talk, port, half),
        asyncio.to_thread(_talk, port, b"G", slow_line),
    )
    for answer, seconds, _ in (silent, cut, dribbled):
        assert answer.startswith(b"HTTP/1.1 408 Request Timeout\r\n"), answer
        assert answer.endswith(
            b'{"detail":"the request\'s headers did not arrive within 1 s: send it again"}'
        )
        assert HEADER_TIMEOUT_S * 0.9 <= seconds < HEADER_TIMEOUT_S + 2, seconds
    # Each byte kept coming, and the deadline still held from the first one.
    assert 0 < dribbled[2] < len(slow_line)


async def test_a_body_sent_too_slowly_is_refused_with_408(worker: Harness, web: Served) -> None:
    agent = await worker.create_agent()
    port = int(web.base_url.rsplit(":", 1)[1])
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(
        f"POST /v1/agents/{agent.handle}/messages HTTP/1.1\r\nHost: web\r\n"
        f"Authorization: Bearer {web.token}\r\nContent-Type: application/json\r\n"
        'Content-Length: 100\r\n\r\n{"channel": '.encode()
    )
    await writer.drain()
    try:
        answer = await asyncio.wait_for(reader.read(), BODY_TIMEOUT_S + 5)
    finally:
        writer.close()
    head, _, body = answer.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 408 "), answer
    assert body == (
        b'{"detail":"the body did not arrive within 1 s (12 bytes came): send it again"}'
    )
    assert await turns(worker, agent.handle) == 0


async def test_past_temporals_in_flight_limit_a_post_is_a_503_with_retry_after(
    client: Client, stack: Stack, tmp_path: Path
) -> None:
    # Each reply takes a while, so the agent's submissions stay in flight.
    slow = [ScriptRule(task="respond", reply="later", delay_ms=5_000)]
    async with running_worker(client, stack, rules=slow) as harness:
        agent = await harness.create_agent()
        settings = stack.settings(home=tmp_path, task_queue=harness.task_queue)
        async with (
            serving(settings, client, messages_per_minute=0) as web,
            web.http() as http,
        ):
            url = f"/v1/agents/{agent.handle}/messages"
            event_ids = [new_ulid() for _ in range(30)]
            answers = await asyncio.gather(
                *(http.post(url, json=message(event_id=e)) for e in event_ids)
            )
    statuses = [answer.status_code for answer in answers]
    assert set(statuses) == {202, 503}, [a.text for a in answers]
    busy = answers[statuses.index(503)]
    assert busy.headers["Retry-After"] == "5"
    event_id = event_ids[statuses.index(503)]
    assert busy.json() == {
        "detail": f"agent {agent.handle!r} has as many messages in flight as it may hold: "
        f"resend in 5 s with the same event_id {event_id}"
    }
