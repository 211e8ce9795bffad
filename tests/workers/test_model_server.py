"""The local model runs in its own supervised server: its death costs a turn, never the worker.

A private stack on the real local model (SmolLM2 through llama.cpp's server), started by
``persyn up`` exactly as for a user with no API key. Skipped without the ``local`` extra.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import tempfile
import urllib.request
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path

import psycopg
import pytest

from activities.channels.stream import libpq_dsn, stream_channel
from schemas.events import ChannelRef, InboundEvent, Outcome, Receipt, Speaker
from schemas.ids import new_ulid
from schemas.local_model import base_url
from schemas.settings import Settings
from temporal import inbox
from temporal.client import connect
from temporal.devserver import free_port
from tests.harness import until
from workers import pidfile
from workers.model_server import chat_format_for, missing_dependency, model_server
from workers.process import MODEL_SERVER, WORKER, pid_file

PERSYN = [sys.executable, "-m", "cli.main"]
RESTART_AFTER_S = 30.0
"""Longer than the model call's retries last, so the turn degrades before the server is back."""

pytestmark = pytest.mark.local_model


@pytest.fixture(scope="module")
def home() -> Iterator[dict[str, str]]:
    reason = missing_dependency()
    if reason is not None:
        pytest.skip(reason)
    with tempfile.TemporaryDirectory(prefix="persyn-local-") as path:
        Path(path).chmod(0o755)  # the embedded PostgreSQL may run as another user
        env = {
            **os.environ,
            "PERSYN_HOME": path,
            "PERSYN_TEMPORAL_ADDRESS": f"127.0.0.1:{free_port()}",
            "PERSYN_TEMPORAL_UI_PORT": str(free_port()),
            "PERSYN_POSTGRES_PORT": str(free_port()),
            "PERSYN_CODEC_PORT": str(free_port()),
            "PERSYN_LOCAL_MODEL_PORT": str(free_port()),
            "PERSYN_PROVIDER": "local",
            "PERSYN_SUPERVISOR_BACKOFF_SECONDS": str(RESTART_AFTER_S),
        }
        for key in ("PERSYN_DATABASE_URL", "PERSYN_EMBEDDED"):
            env.pop(key, None)
        up = persyn(env, "up")
        assert up.returncode == 0, up.stdout + up.stderr
        created = persyn(env, "agent", "create", "ada", "--name", "Ada", "--persona", "Kind.")
        assert created.returncode == 0, created.stderr
        yield env
        persyn(env, "down")


def persyn(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*PERSYN, *args], env=env, capture_output=True, text=True, timeout=300, check=False
    )


def settings_of(env: dict[str, str]) -> Settings:
    return Settings(
        home=Path(env["PERSYN_HOME"]),
        temporal_address=env["PERSYN_TEMPORAL_ADDRESS"],
        postgres_port=int(env["PERSYN_POSTGRES_PORT"]),
        local_model_port=int(env["PERSYN_LOCAL_MODEL_PORT"]),
        provider="local",
    )


def live(settings: Settings, name: str) -> int:
    pid = pidfile.live_pid(pid_file(settings, name))
    assert pid is not None, f"no {name} running"
    return pid


def question(text: str) -> InboundEvent:
    return InboundEvent(
        event_id=new_ulid(),
        channel=ChannelRef(service="terminal", channel="console"),
        speaker=Speaker(speaker_id="sam", display_name="Sam"),
        text=text,
        stream=True,
    )


@asynccontextmanager
async def first_token(settings: Settings, event: InboundEvent) -> AsyncIterator[asyncio.Event]:
    """Set once the first token of ``event``'s reply is streamed (LISTEN on its channel)."""
    arrived = asyncio.Event()
    dsn = libpq_dsn(settings.database_dsn())
    async with await psycopg.AsyncConnection.connect(dsn, autocommit=True) as conn:
        # LISTEN first: while notifies() waits, the connection takes no other command.
        await conn.execute(f'LISTEN "{stream_channel(event.event_id)}"')

        async def pump() -> None:
            async for _ in conn.notifies():
                arrived.set()

        task = asyncio.create_task(pump())
        try:
            yield arrived
        finally:
            task.cancel()


def test_status_shows_the_model_server_as_a_component(home: dict[str, str]) -> None:
    settings = settings_of(home)
    status = persyn(home, "status", "--json")
    assert status.returncode == 0, status.stderr
    server = next(c for c in json.loads(status.stdout)["components"] if c["name"] == "model-server")
    assert server["healthy"] is True
    assert server["address"] == base_url(settings)
    assert server["pid"] == live(settings, MODEL_SERVER)
    with urllib.request.urlopen(f"{base_url(settings)}/models", timeout=5) as response:
        models = json.loads(response.read())
    assert models["data"][0]["id"] == model_server(settings).model_path.stem


def test_the_server_keeps_evaluated_prompts_unless_told_not_to(tmp_path: Path) -> None:
    command = model_server(Settings(home=tmp_path)).command()
    at = command.index("--cache")
    assert command[at : at + 6] == [
        "--cache",
        "True",
        "--cache_type",
        "ram",
        "--cache_size",
        str(256 << 20),
    ]
    assert "--cache" not in model_server(Settings(home=tmp_path, local_model_cache_mib=0)).command()


def test_each_model_family_gets_its_chat_format() -> None:
    assert chat_format_for(Path("SmolLM2-135M-Instruct.Q4_1.gguf")) == "chatml"
    assert chat_format_for(Path("gemma-3-270m-it-Q4_K_M.gguf")) == "gemma"


async def test_a_killed_model_server_degrades_the_turn_and_the_worker_lives_on(
    home: dict[str, str],
) -> None:
    settings = settings_of(home)
    client = await connect(settings)
    worker, server = live(settings, WORKER), live(settings, MODEL_SERVER)
    event = question("Tell me a long story about the sea, the tides and the harbour.")
    async with first_token(settings, event) as generating:
        turn: asyncio.Task[Receipt] = asyncio.create_task(
            inbox.submit(client, handle="ada", event=event, task_queue=settings.task_queue)
        )
        await asyncio.wait_for(generating.wait(), 120)
        os.kill(server, signal.SIGKILL)  # mid-generation

    receipt = await asyncio.wait_for(turn, 180)
    assert receipt.marker is not None
    assert receipt.marker.degraded is True
    assert receipt.marker.outcome is Outcome.DEGRADED
    assert live(settings, WORKER) == worker  # the same process served throughout

    # The supervisor brings the server back; the next turn is a real reply again.
    await until(lambda: model_server(settings).answers(), timeout=RESTART_AFTER_S + 90)
    assert live(settings, MODEL_SERVER) != server
    again = await inbox.submit(
        client, handle="ada", event=question("Hello again!"), task_queue=settings.task_queue
    )
    assert again.marker is not None
    assert again.marker.outcome is Outcome.SPOKE and not again.marker.degraded
    assert live(settings, WORKER) == worker

    log = (settings.log_dir / "supervisor.log").read_text()
    assert f"model-server (pid {server}) died (SIGKILL)" in log
    assert "model-server restarted" in log


def test_a_grammar_llama_cpp_cannot_compile_crashes_the_server_not_the_worker(
    home: dict[str, str],
) -> None:
    settings = settings_of(home)
    worker, server = live(settings, WORKER), live(settings, MODEL_SERVER)
    schema = {
        "type": "object",
        "properties": {"summary": {"type": "string", "maxLength": 8000}},
        "required": ["summary"],
    }
    request = urllib.request.Request(
        f"{base_url(settings)}/chat/completions",
        data=json.dumps(
            {
                "model": "local",
                "messages": [{"role": "user", "content": "Summarise: hello"}],
                "max_tokens": 16,
                "response_format": {"type": "json_object", "schema": schema},
            }
        ).encode(),
        headers={"Content-Type": "application/json"},
    )
    with pytest.raises(OSError):  # the server dies before it answers
        urllib.request.urlopen(request, timeout=60)

    supervisor_log = settings.log_dir / "supervisor.log"
    died = f"model-server (pid {server}) died (SIGSEGV)"
    asyncio.run(until(lambda: died in supervisor_log.read_text(), timeout=30))
    assert live(settings, WORKER) == worker
    # llama.cpp dumped the whole grammar on one line; the log keeps it readable.
    lines = (settings.log_dir / "model-server.log").read_text(errors="replace").splitlines()
    assert any(line.endswith("more bytes cut]") for line in lines)
    assert max(len(line.encode()) for line in lines) < 2100


def test_up_says_in_one_line_when_the_local_model_cannot_be_served() -> None:
    with tempfile.TemporaryDirectory(prefix="persyn-nomodel-") as path:
        Path(path).chmod(0o755)  # the embedded PostgreSQL may run as another user
        missing = Path(path) / "nowhere.gguf"
        env = {
            **os.environ,
            "PERSYN_HOME": path,
            "PERSYN_TEMPORAL_ADDRESS": f"127.0.0.1:{free_port()}",
            "PERSYN_TEMPORAL_UI_PORT": str(free_port()),
            "PERSYN_POSTGRES_PORT": str(free_port()),
            "PERSYN_CODEC_PORT": str(free_port()),
            "PERSYN_LOCAL_MODEL_PORT": str(free_port()),
            "PERSYN_LOCAL_MODEL_PATH": str(missing),
            "PERSYN_PROVIDER": "local",
        }
        try:
            up = persyn(env, "up")
            assert up.returncode == 1, up.stdout
            assert up.stderr.strip() == (
                f"error: local model file {missing} does not exist: set PERSYN_LOCAL_MODEL_PATH"
            ), up.stderr
            # What this `up` started has nothing to serve: no supervisor is left behind.
            assert pidfile.live_pid(pid_file(settings_of(env), "supervisor")) is None
        finally:
            persyn(env, "down")
