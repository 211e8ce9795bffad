"""What the voice endpoint adds before the first spoken word: settled turn to first token.

One private stack, one real worker process (scripted echo model, for each turn's background
run), ``persyn serve`` in its own process whose fast model is a local OpenAI-compatible server
answering every streamed request after a fixed latency. Turns alternate one by one between:

- **voice**: ``POST /voice/v1/agents/{handle}/chat/completions`` (stream) for one live call,
  timed from the request sent until the first content chunk arrives: the whole fast path
  (token and agent checks, the call's session, guardrails, the prompt, the gateway) plus the
  model's own latency. Every turn also starts the full pipeline in the background.
- **direct**: the same model server's ``/v1/chat/completions`` (stream), timed the same way.

Run: ``python -m bench.voice_latency [turns per path]``.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import subprocess
import sys
import time
from collections.abc import AsyncIterator

import httpx
import uvicorn
from fastapi import FastAPI, Request
from fastapi.responses import StreamingResponse

from bench.harness import BenchStack, bench_stack, new_agent, percentile, record, worker_process
from bench.web_overhead import _ready
from schemas.ids import new_ulid
from store.db import Database
from temporal.devserver import free_port
from usecases.tokens import create_token

MODEL_LATENCY_MS = 150.0
"""The fake model's time to its first token."""
TARGET_MS = 50.0
CALLER = "+15550001"


def model_app(latency_ms: float) -> FastAPI:
    """An OpenAI-compatible server that streams a short reply after ``latency_ms``."""
    app = FastAPI()

    @app.post("/v1/chat/completions")
    async def complete(request: Request) -> StreamingResponse:
        await request.body()

        async def chunks() -> AsyncIterator[str]:
            await asyncio.sleep(latency_ms / 1000)
            for word in ("Sure, ", "I can ", "do that."):
                delta = {"role": "assistant", "content": word}
                yield "data: " + json.dumps(_chunk(delta, None)) + "\n\n"
            yield "data: " + json.dumps(_chunk({}, "stop")) + "\n\n"
            usage = {"prompt_tokens": 50, "completion_tokens": 5, "total_tokens": 55}
            yield "data: " + json.dumps({**_chunk({}, None), "choices": [], "usage": usage})
            yield "\n\ndata: [DONE]\n\n"

        return StreamingResponse(chunks(), media_type="text/event-stream")

    return app


def _chunk(delta: dict[str, str], finish: str | None) -> dict[str, object]:
    return {
        "id": "chatcmpl-bench",
        "object": "chat.completion.chunk",
        "created": int(time.time()),
        "model": "bench-fast",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }


@contextlib.asynccontextmanager
async def serving_model(latency_ms: float) -> AsyncIterator[str]:
    """The fake model server in this loop; its base URL."""
    port = free_port()
    config = uvicorn.Config(model_app(latency_ms), host="127.0.0.1", port=port, log_level="error")
    server = uvicorn.Server(config)
    task = asyncio.create_task(server.serve())
    while not server.started:
        await asyncio.sleep(0.05)
    try:
        yield f"http://127.0.0.1:{port}/v1"
    finally:
        server.should_exit = True
        with contextlib.suppress(asyncio.CancelledError):
            await asyncio.wait_for(task, 10)


def web_process(
    stack: BenchStack, queue: str, port: int, model_url: str
) -> subprocess.Popen[bytes]:
    """``persyn serve`` whose fast model is the fake server; the caller on the allow-list."""
    env = {
        **os.environ,
        "PERSYN_HOME": str(stack.home),
        "PERSYN_TEMPORAL_ADDRESS": stack.temporal_address,
        "PERSYN_DATABASE_URL": stack.dsn,
        "PERSYN_TASK_QUEUE": queue,
        "PERSYN_EMBEDDED": "false",
        "PERSYN_PROVIDER": "scripted",
        "PERSYN_MODELS__VOICE": json.dumps(
            {
                "provider": "openai-compatible",
                "model": "bench-fast",
                "context_window": 8192,
                "tier": "fast",
            }
        ),
        "PERSYN_OPENAI_BASE_URL": model_url,
        "PERSYN_VOICE__ALLOW": json.dumps([CALLER]),
    }
    log = (stack.home / "logs" / "serve.log").open("ab")
    return subprocess.Popen(
        [sys.executable, "-m", "cli.main", "serve", "--port", str(port)],
        env=env,
        stdout=log,
        stderr=log,
    )


async def first_token_ms(
    http: httpx.AsyncClient, url: str, body: dict[str, object], own: list[float] | None = None
) -> float:
    """Milliseconds from sending ``body`` until the first chunk with content arrives.

    ``own`` gets the server's own time before it asked the model (``Server-Timing``).
    """
    started = time.perf_counter()
    first: float | None = None
    async with http.stream("POST", url, json=body) as answer:
        assert answer.status_code == 200, await answer.aread()
        if own is not None:
            timing = answer.headers["server-timing"]
            own.append(float(timing.split("dur=", 1)[1].split(";", 1)[0]))
        # Read to the end, as a platform does, timing the first chunk that carries words.
        async for line in answer.aiter_lines():
            if first is not None or not line.startswith("data: ") or line == "data: [DONE]":
                continue
            choices = json.loads(line[6:]).get("choices") or [{}]
            if choices[0].get("delta", {}).get("content"):
                first = (time.perf_counter() - started) * 1000
    assert first is not None, "no content arrived"
    return first


def _row(name: str, values: list[float]) -> str:
    return (
        f"| {name} | {len(values)} | {percentile(values, 0.5):.1f} | "
        f"{percentile(values, 0.95):.1f} | {min(values):.1f} |"
    )


async def main(turns: int) -> None:
    async with bench_stack() as stack, serving_model(MODEL_LATENCY_MS) as model_url:
        queue = "bench-voice"
        db = Database(stack.dsn, pool_size=2)
        agent = await new_agent(db, "voice")
        _, token = await create_token(settings=stack.settings(), name="bench")
        port = free_port()
        call_id = f"bench-{new_ulid().lower()}"
        transcript: list[dict[str, str]] = []
        voice: list[float] = []
        direct: list[float] = []
        own: list[float] = []
        async with worker_process(stack, queue):
            server = web_process(stack, queue, port, model_url)
            try:
                async with (
                    httpx.AsyncClient(
                        base_url=f"http://127.0.0.1:{port}",
                        headers={"Authorization": f"Bearer {token}"},
                        timeout=60,
                    ) as web,
                    httpx.AsyncClient(timeout=60) as model,
                ):
                    await _ready(web, server)
                    for i in range(turns + 3):  # three turns to warm up
                        transcript.append({"role": "user", "content": f"Turn {i}, please."})
                        call = {
                            "model": "gpt-4o",
                            "stream": True,
                            "messages": transcript[-20:],
                            "call": {"id": call_id, "customer": {"number": CALLER}},
                        }
                        mine: list[float] = []
                        took = await first_token_ms(
                            web, f"/voice/v1/agents/{agent}/chat/completions", call, mine
                        )
                        raw = {"model": "bench-fast", "stream": True, "messages": transcript[-20:]}
                        plain = await first_token_ms(model, f"{model_url}/chat/completions", raw)
                        transcript.append({"role": "assistant", "content": "Sure, I can do that."})
                        if i >= 3:
                            voice.append(took)
                            direct.append(plain)
                            own.extend(mine)
            finally:
                server.terminate()
                server.wait(20)
        await db.aclose()

    p50 = percentile(voice, 0.5) - percentile(direct, 0.5)
    p95 = percentile(voice, 0.95) - percentile(direct, 0.95)
    paired = [v - d for v, d in zip(voice, direct, strict=True)]
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    verdict = "meets" if p50 <= TARGET_MS else "misses"
    record(
        "Voice fast path: settled turn to first streamed token, against the model called directly",
        f"""
One stack, one worker process (scripted echo model, running each turn's background pipeline),
`persyn serve` in its own process with its `voice` task bound to a local OpenAI-compatible
server that streams after {MODEL_LATENCY_MS:.0f} ms; one live call of {turns} turns (after 3
warm-up turns), each turn alternating with a direct streamed request to the same model
server; load average at the end {load} (the machine is shared). Timed from the request sent
to the first chunk carrying content.

| path | turns | p50 ms | p95 ms | min ms |
|---|---|---|---|---|
{_row("voice endpoint (fast path)", voice)}
{_row("model called directly", direct)}
{_row("the endpoint's own time before it asks the model (Server-Timing)", own)}

Overhead of the fast path: p50 {p50:+.1f} ms, p95 {p95:+.1f} ms; paired difference (voice
minus the direct request beside it) median {percentile(paired, 0.5):+.1f} ms. Target (at most
{TARGET_MS:.0f} ms at p50): {verdict} it. (`python -m bench.voice_latency {turns}`)
""",
    )


if __name__ == "__main__":
    asyncio.run(main(int(sys.argv[1]) if len(sys.argv) > 1 else 40))
