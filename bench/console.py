"""``persyn console``: first token on screen after Enter, and its CPU while idle.

One private stack and one real worker process whose scripted model answers after a fixed
latency (``LATENCY_MS``), then streams its reply. Two figures:

- **First token**: the console (Textual, headless, driven by its pilot in this process) from
  pressing Enter until the first piece of the draft is in the turn's widget, against
  ``usecases.submission.submit`` (what ``persyn send`` runs once its process is up) until the
  receipt, one message each in turn, two agents (one per path) so neither conversation grows
  faster. ``persyn send`` shows nothing before the whole reply, so its first token is its reply.
- **Idle CPU**: ``persyn console`` as an operator runs it (in tmux, its own process), open on an
  agent that meanwhile streams replies to messages on another channel, for ``IDLE_S``
  seconds; the console process's user and system CPU time over the wall time.

Run: ``python -m bench.console [messages per path]``.
"""

from __future__ import annotations

import asyncio
import json
import os
import shlex
import subprocess
import sys
import time
from pathlib import Path

import psutil
from textual.pilot import Pilot

from bench.harness import BenchStack, bench_stack, new_agent, percentile, record, worker_process
from cli.console_app.app import ConsoleApp
from cli.console_app.session import ConsoleSession
from schemas.events import ChannelRef, Outcome, Speaker
from store.db import Database
from usecases import submission
from workers.presence import HomePresence

LATENCY_MS = 200.0
"""The scripted model's fixed latency before it streams its reply."""
TARGET_MS = 30.0
"""First token on the console within this of ``persyn send``'s reply (p50 and p95)."""
IDLE_S = 60.0
"""How long the idle console is measured."""
CPU_TARGET = 2.0
"""Percent of one core."""
ROOT = Path(__file__).resolve().parents[1]


def _script(home: Path) -> Path:
    path = home / "console-script.json"
    reply = "A reply of a few words, streamed as the model writes it."
    path.write_text(json.dumps({"rules": [{"delay_ms": LATENCY_MS, "reply": reply}]}))
    return path


async def _console_block(app: ConsoleApp, pilot: Pilot[None], i: int, out: list[float]) -> None:
    before = len(app.transcript.turns())
    app.composer.load_text(f"console {i}")
    started = time.perf_counter()
    await pilot.press("enter")
    while True:
        turns = app.transcript.turns()
        if len(turns) > before and turns[-1].draft:
            break
        await asyncio.sleep(0.001)
    out.append((time.perf_counter() - started) * 1000)
    while turns[-1].outcome is None:
        await asyncio.sleep(0.01)
    assert turns[-1].outcome is Outcome.SPOKE, turns[-1].text


async def _send_block(stack: BenchStack, queue: str, handle: str, i: int, out: list[float]) -> None:
    settings = stack.settings(task_queue=queue)
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
    out.append((time.perf_counter() - started) * 1000)
    assert receipt.marker is not None and receipt.marker.outcome is Outcome.SPOKE


async def first_tokens(
    stack: BenchStack, queue: str, console_agent: str, send_agent: str, messages: int
) -> tuple[list[float], list[float]]:
    """First token on the console and ``persyn send``'s reply, alternating, after warm-up."""
    session = ConsoleSession(
        settings=stack.settings(task_queue=queue),
        handle=console_agent,
        agent_name="Bench",
        speaker=Speaker(speaker_id="bench", display_name="Bench"),
        channel=ChannelRef(service="terminal", channel="console"),
    )
    app = ConsoleApp(session)
    console: list[float] = []
    send: list[float] = []
    async with app.run_test(size=(110, 36)) as pilot:
        for i in range(3):
            await _console_block(app, pilot, i, [])
            await _send_block(stack, queue, send_agent, i, [])
        for i in range(messages):
            await _console_block(app, pilot, i, console)
            await _send_block(stack, queue, send_agent, i, send)
    return console, send


def _console_process(stack: BenchStack, queue: str, handle: str) -> tuple[str, psutil.Process]:
    """``persyn console`` in tmux on a private server; the socket and the console's process."""
    socket = f"persyn-bench-{os.getpid()}"
    env = {
        "PERSYN_HOME": str(stack.home),
        "PERSYN_TEMPORAL_ADDRESS": stack.temporal_address,
        "PERSYN_DATABASE_URL": stack.dsn,
        "PERSYN_TASK_QUEUE": queue,
        "PERSYN_EMBEDDED": "false",
        "TERM": "xterm-256color",
    }
    command = [sys.executable, "-m", "cli.main", "console", "--agent", handle]
    line = shlex.join(["env", *(f"{k}={v}" for k, v in env.items()), *command])
    tmux = ["tmux", "-L", socket]
    subprocess.run([*tmux, "new-session", "-d", "-s", "c", "-x", "110", "-y", "36"], check=True)
    subprocess.run([*tmux, "respawn-pane", "-k", "-t", "c", "-c", str(ROOT), line], check=True)
    pane = subprocess.run(
        [*tmux, "display-message", "-p", "-t", "c", "#{pane_pid}"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    root = psutil.Process(int(pane))
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        for found in [root, *root.children(recursive=True)]:
            if "cli.main" in " ".join(found.cmdline()):
                return socket, found
        time.sleep(0.1)
    raise RuntimeError("persyn console did not start")


def _shown(socket: str) -> str:
    return subprocess.run(
        ["tmux", "-L", socket, "capture-pane", "-p", "-t", "c"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout


async def idle_cpu(stack: BenchStack, queue: str, handle: str) -> tuple[float, int]:
    """The console's CPU (percent of one core) while its agent streams elsewhere; messages."""
    socket, console = _console_process(stack, queue, handle)
    try:
        deadline = time.monotonic() + 60
        while "Heartbeat" not in _shown(socket):
            if time.monotonic() > deadline:
                raise RuntimeError(f"the console did not draw:\n{_shown(socket)}")
            await asyncio.sleep(0.2)
        await asyncio.sleep(5)  # past start-up
        settings = stack.settings(task_queue=queue)
        before = console.cpu_times()
        started = time.monotonic()
        sent = 0
        while time.monotonic() - started < IDLE_S:
            event = submission.build_event(
                channel=ChannelRef(service="terminal", channel="elsewhere"),
                speaker=Speaker(speaker_id="someone-else"),
                text=f"elsewhere {sent}",
                stream=True,
            )
            await submission.submit(
                client=stack.client,
                settings=settings,
                presence=HomePresence(settings),
                handle=handle,
                event=event,
            )
            sent += 1
        after = console.cpu_times()
        wall = time.monotonic() - started
    finally:
        subprocess.run(["tmux", "-L", socket, "kill-server"], check=False)
    used = (after.user - before.user) + (after.system - before.system)
    return 100 * used / wall, sent


def _row(name: str, values: list[float]) -> str:
    return (
        f"| {name} | {len(values)} | {percentile(values, 0.5):.1f} | "
        f"{percentile(values, 0.95):.1f} | {min(values):.1f} |"
    )


async def main(messages: int) -> None:
    """Both figures in one run, recorded in bench/RESULTS.md."""
    async with bench_stack() as stack:
        queue = "bench-console"
        db = Database(stack.dsn, pool_size=2)
        agents = [await new_agent(db, prefix) for prefix in ("console", "send", "idle")]
        env = {"PERSYN_SCRIPTED_SCRIPT": str(_script(stack.home))}
        async with worker_process(stack, queue, env):
            console, send = await first_tokens(stack, queue, agents[0], agents[1], messages)
            cpu, streamed = await idle_cpu(stack, queue, agents[2])
        await db.aclose()

    p50 = percentile(console, 0.5) - percentile(send, 0.5)
    p95 = percentile(console, 0.95) - percentile(send, 0.95)
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    verdict = "meets" if p50 <= TARGET_MS and p95 <= TARGET_MS else "misses"
    cpu_verdict = "meets" if cpu < CPU_TARGET else "misses"
    record(
        "Console: first token on screen after Enter, and CPU while idle",
        f"""
One stack, one worker process, the scripted model answering after {LATENCY_MS:.0f} ms and then
streaming its reply; messages alternate one by one between the paths (two agents), after 3
warm-up messages each; load average at the end {load} (the machine is shared). Console: the
Textual app headless in the bench's process, from pressing Enter until the first piece of the
draft is in the turn's widget. Send: `usecases.submission.submit`, what `persyn send` runs,
until the receipt (send shows nothing before the whole reply).

| path | messages | p50 ms | p95 ms | min ms |
|---|---|---|---|---|
{_row("console: Enter to first token", console)}
{_row("send: to the reply", send)}

First token on the console against send's reply: p50 {p50:+.1f} ms, p95 {p95:+.1f} ms.
Target (within {TARGET_MS:.0f} ms of send at p50 and p95): {verdict} it.

Idle: `persyn console` in tmux (its own process), open on an agent answering {streamed}
streamed messages on another channel over {IDLE_S:.0f} s: the console used {cpu:.2f}% of one
core (user and system time over wall time; its side panel reads the agent's state every 10 s).
Target (under {CPU_TARGET:.0f}%): {cpu_verdict} it.
(`python -m bench.console {messages}`)
""",
    )


if __name__ == "__main__":
    asyncio.run(main(int(sys.argv[1]) if len(sys.argv) > 1 else 40))
