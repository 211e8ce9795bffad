"""The web channel served with a voice runtime whose fast model the test scripts."""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import httpx
import uvicorn
from sqlmodel import col, select
from temporalio.client import Client

from activities.gateway.providers.scripted import Script, ScriptedProvider, ScriptRule
from schemas.events import ChannelRef, Speaker
from schemas.models import ProviderName
from schemas.settings import Settings
from store.db import Database
from store.queries.people import resolve_speaker
from store.tables import DialogTurnRow
from temporal.devserver import free_port
from tests.harness import Harness, until
from usecases.tokens import TokenPublic, create_token
from webchannel.app import create_app
from webchannel.server import server_config
from webchannel.voice.runtime import VoiceRuntime


@dataclass
class Line:
    """A served voice endpoint, its token and the fast model behind it."""

    base_url: str
    token: str
    record: TokenPublic
    fast: ScriptedProvider
    app: Any

    def http(self) -> httpx.AsyncClient:
        return httpx.AsyncClient(
            base_url=self.base_url, headers={"Authorization": f"Bearer {self.token}"}, timeout=60
        )

    @property
    def runtime(self) -> VoiceRuntime:
        runtime: VoiceRuntime = self.app.state.voice
        return runtime


@asynccontextmanager
async def serving_calls(
    settings: Settings,
    client: Client,
    *,
    fast_rules: list[ScriptRule] | None = None,
    token: tuple[TokenPublic, str] | None = None,
) -> AsyncIterator[Line]:
    """``persyn serve`` in this loop, its fast model scripted by ``fast_rules``.

    ``token`` is one made before (a restarted service, the same transport); else a new one.
    """
    fast = ScriptedProvider(Script(rules=fast_rules or []))
    app = create_app(settings, client=client)
    app.state.voice_providers = {ProviderName.SCRIPTED: fast}
    port = free_port()
    config = server_config(app, host="127.0.0.1", port=port, log_level="warning", lifespan="on")
    server = uvicorn.Server(config)
    task = asyncio.create_task(server.serve())
    await until(lambda: server.started, timeout=20)
    record, secret = token or await create_token(settings=settings, name="voice")
    try:
        yield Line(f"http://127.0.0.1:{port}", secret, record, fast, app)
    finally:
        server.should_exit = True
        with contextlib.suppress(asyncio.CancelledError):
            await asyncio.wait_for(task, 20)


def turn(
    agent: str, call_id: str, *said: str, number: str = "+15550001", stream: bool = True
) -> dict[str, Any]:
    """A Vapi-shaped body: the call's transcript so far, the caller's number, the call ID."""
    messages: list[dict[str, str]] = [{"role": "system", "content": "platform prompt"}]
    for i, text in enumerate(said):
        messages.append({"role": "user" if i % 2 == 0 else "assistant", "content": text})
    return {
        "model": agent,
        "stream": stream,
        "messages": messages,
        "call": {"id": call_id, "type": "inboundPhoneCall", "customer": {"number": number}},
    }


async def spoken(response: httpx.Response) -> str:
    """The words of a streamed answer, checked to be OpenAI chunks ending in ``[DONE]``."""
    words, done = [], False
    async for line in response.aiter_lines():
        if not line.startswith("data: "):
            continue
        data = line[6:]
        if data == "[DONE]":
            done = True
            continue
        parsed = json.loads(data)
        assert parsed["object"] == "chat.completion.chunk"
        words.append(parsed["choices"][0]["delta"].get("content") or "")
    assert done, "the stream did not end with data: [DONE]"
    return "".join(words)


async def say(line: Line, body: dict[str, Any], *, by_model: bool = False) -> tuple[int, str]:
    """Post one turn; the status and the spoken words (or the refusal's detail).

    The agent is named in the URL, as a platform's custom-LLM URL does, or (``by_model``) only
    in ``model`` on the route without a handle.
    """
    path = "/voice/v1/chat/completions"
    if not by_model:
        path = f"/voice/v1/agents/{body['model']}/chat/completions"
        body = {**body, "model": "gpt-4o"}  # the platform's own name for its model
    async with (
        line.http() as http,
        http.stream("POST", path, json=body) as r,
    ):
        if r.status_code != 200:
            await r.aread()
            return r.status_code, str(r.json()["detail"])
        return 200, await spoken(r)


async def known_person(db: Database, agent: str, number: str, name: str) -> str:
    """A person the agent already knows by ``number`` (met on a typed channel before)."""
    async with db.session() as session:
        met = await resolve_speaker(
            session,
            agent=agent,
            channel=ChannelRef(service="web", channel="earlier"),
            speaker=Speaker(speaker_id=number, display_name=name),
            seen_at=datetime.now(UTC),
        )
    return met.person_id


async def dialog(worker: Harness, agent: str) -> list[DialogTurnRow]:
    async with worker.db.session() as session:
        rows = await session.exec(
            select(DialogTurnRow)
            .where(DialogTurnRow.agent == agent)
            .order_by(col(DialogTurnRow.seq))
        )
        return list(rows)
