"""What the web channel adds to a message: HTTP POST to reply against ``persyn send``'s use case.

One private stack, one real worker process (scripted echo model) and ``persyn serve`` in its
own process. Two agents, one per path, so neither path's conversation grows faster. Messages
alternate between the paths one by one, so drift on a shared machine hits both alike, and each
web message is also compared with the send message next to it (the paired difference):

- **web**: ``POST /v1/agents/{handle}/messages`` with ``Prefer: wait=30`` over a kept-alive
  HTTP connection, timed until the response carries the completion marker (the reply);
- **send**: ``usecases.submission.submit``, what ``persyn send`` runs once its process is up,
  timed until the receipt carries the marker.

Run: ``python -m bench.web_overhead [messages per path]``.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import time

import httpx

from bench.harness import BenchStack, bench_stack, new_agent, percentile, record, worker_process
from schemas.events import ChannelRef, Outcome, Speaker
from store.db import Database
from temporal.devserver import free_port
from usecases import submission
from usecases.tokens import create_token
from workers.presence import HomePresence

BLOCK = 1
TARGET_MS = 20.0


def web_process(stack: BenchStack, queue: str, port: int) -> subprocess.Popen[bytes]:
    """``persyn serve`` as an operator runs it, against the bench's stack."""
    env = {
        **os.environ,
        "PERSYN_HOME": str(stack.home),
        "PERSYN_TEMPORAL_ADDRESS": stack.temporal_address,
        "PERSYN_DATABASE_URL": stack.dsn,
        "PERSYN_TASK_QUEUE": queue,
        "PERSYN_EMBEDDED": "false",
    }
    log = (stack.home / "logs" / "serve.log").open("ab")
    return subprocess.Popen(
        [sys.executable, "-m", "cli.main", "serve", "--port", str(port)],
        env=env,
        stdout=log,
        stderr=log,
    )


async def _ready(http: httpx.AsyncClient, process: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + 60
    while True:
        try:
            if (await http.get("/openapi.json")).status_code == 200:
                return
        except httpx.TransportError:
            pass
        if process.poll() is not None or time.monotonic() > deadline:
            raise RuntimeError("persyn serve did not start: see logs/serve.log")
        await asyncio.sleep(0.1)


def _agent_ms(answer: httpx.Response) -> float:
    """The server's own measure of the shared use case (``Server-Timing: agent;dur=...``)."""
    timing = answer.headers["server-timing"]
    return float(timing.split("dur=", 1)[1].split(";", 1)[0])


async def _web_block(
    http: httpx.AsyncClient, handle: str, n: int, out: list[float], own: list[float]
) -> None:
    for i in range(n):
        started = time.perf_counter()
        answer = await http.post(
            f"/v1/agents/{handle}/messages",
            json={"channel": "bench", "speaker": {"speaker_id": "bench"}, "text": f"web {i}"},
            # No token deltas, as `persyn send` asks for none: the same work for the worker.
            headers={"Prefer": "wait=30"},
        )
        elapsed = (time.perf_counter() - started) * 1000
        body = answer.json()
        assert answer.status_code == 200, body
        assert body["marker"]["outcome"] == Outcome.SPOKE.value, body
        out.append(elapsed)
        own.append(elapsed - _agent_ms(answer))


async def _send_block(stack: BenchStack, queue: str, handle: str, n: int, out: list[float]) -> None:
    settings = stack.settings(task_queue=queue)
    for i in range(n):
        event = submission.build_event(
            channel=ChannelRef(service="terminal", channel="bench"),
            speaker=Speaker(speaker_id="bench"),
            text=f"send {i}",
        )
        started = time.perf_counter()
        receipt = await submission.submit(
            client=stack.client,
            settings=settings,
            presence=HomePresence(settings),
            handle=handle,
            event=event,
        )
        elapsed = (time.perf_counter() - started) * 1000
        assert receipt.marker is not None and receipt.marker.outcome is Outcome.SPOKE
        out.append(elapsed)


def _row(name: str, values: list[float]) -> str:
    return (
        f"| {name} | {len(values)} | {percentile(values, 0.5):.1f} | "
        f"{percentile(values, 0.95):.1f} | {min(values):.1f} |"
    )


async def main(messages: int) -> None:
    async with bench_stack() as stack:
        queue = "bench-web"
        db = Database(stack.dsn, pool_size=2)
        web_agent, send_agent = await new_agent(db, "web"), await new_agent(db, "send")
        _, token = await create_token(settings=stack.settings(), name="bench")
        port = free_port()
        async with worker_process(stack, queue):
            server = web_process(stack, queue, port)
            try:
                async with httpx.AsyncClient(
                    base_url=f"http://127.0.0.1:{port}",
                    headers={"Authorization": f"Bearer {token}"},
                    timeout=60,
                ) as http:
                    await _ready(http, server)
                    warm: list[float] = []
                    await _web_block(http, web_agent, 3, warm, [])
                    await _send_block(stack, queue, send_agent, 3, warm)
                    web: list[float] = []
                    send: list[float] = []
                    own: list[float] = []
                    while len(web) < messages:
                        await _web_block(http, web_agent, BLOCK, web, own)
                        await _send_block(stack, queue, send_agent, BLOCK, send)
            finally:
                server.terminate()
                server.wait(20)
        await db.aclose()

    p50 = percentile(web, 0.5) - percentile(send, 0.5)
    p95 = percentile(web, 0.95) - percentile(send, 0.95)
    paired = [w - s for w, s in zip(web, send, strict=True)]
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    verdict = "meets" if p50 <= TARGET_MS and p95 <= TARGET_MS else "misses"
    record(
        "Web channel overhead: HTTP POST to reply against persyn send's use case",
        f"""
One stack, one worker process (scripted echo model), `persyn serve` in its own process;
messages alternate one by one between the paths (two agents, one per path), after 3 warm-up
messages each; load average at the end {load} (the machine is shared). Web: `POST
/v1/agents/{{handle}}/messages` with `Prefer: wait=30` on a kept-alive connection until the
response carries the marker. Send: `usecases.submission.submit`, what
`persyn send` runs, until the receipt carries the marker.

| path | messages | p50 ms | p95 ms | min ms |
|---|---|---|---|---|
{_row("web (HTTP POST to reply)", web)}
{_row("send (use case)", send)}
{_row("web channel's own time (HTTP total minus the server's submit)", own)}

Overhead of the web channel: p50 {p50:+.1f} ms, p95 {p95:+.1f} ms; paired difference (web
minus the send beside it) median {percentile(paired, 0.5):+.1f} ms. The web channel's own
time (HTTP, token and agent checks, parsing, measured around the same use case in the server
with `Server-Timing`) is p50 {percentile(own, 0.5):.1f} ms, p95 {percentile(own, 0.95):.1f} ms.
Target (HTTP POST to reply within {TARGET_MS:.0f} ms of send at p50 and p95): {verdict} it.
(`python -m bench.web_overhead {messages}`)
""",
    )


if __name__ == "__main__":
    asyncio.run(main(int(sys.argv[1]) if len(sys.argv) > 1 else 60))
