"""Benchmark plumbing: a private embedded stack, a worker process, machine facts, RESULTS.md."""

from __future__ import annotations

import asyncio
import os
import platform
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from temporalio.client import Client

from schemas.agents import AgentConfig, AgentCreate
from schemas.settings import Settings
from store.db import Database
from store.embedded import EmbeddedPostgres
from store.migrate import upgrade
from store.queries.agents import create_agent
from temporal import search_attributes
from temporal.client import connect
from temporal.devserver import LOW_LATENCY_CONFIG, DevServer, free_port
from temporal.inbox import has_pollers
from workers.model_server import ModelServer, chat_format_for

RESULTS = Path(__file__).parent / "RESULTS.md"


def machine() -> str:
    """CPU model, cores and Python, for the results table."""
    model = platform.processor() or "unknown CPU"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return f"{model}, {os.cpu_count()} cores, Python {platform.python_version()}"


CALIBRATION_HISTORIES = ("agent", "conversation", "activation")
"""Recorded histories (``tests/histories``, plain payloads) the speed calibration replays."""


async def replay_speed_ms(rounds: int = 20) -> float:
    """CPU milliseconds per 1,000 events to replay recorded histories here, now.

    A worker's recovery is replay on one interpreter lock, and a shared host's speed at it
    changes from hour to hour (2.5 times between two runs of the same replays, in RESULTS.md):
    figures from runs at different speeds are not comparable, so long runs print this. The
    replayer is the worker's (``workers.replay``, workflow code shared), with no server.
    """
    # Imported here: the rest of the harness has no use for the worker's code.
    from schemas.settings import get_settings
    from workers.replay import load_history, replayer

    folder = Path(__file__).parent.parent / "tests" / "histories"
    histories = [load_history(folder / f"{name}.json") for name in CALIBRATION_HISTORIES]
    # A lazy client reaches no server; the recorded histories hold plain payloads (no codec).
    client = await connect(get_settings(), codec=False, lazy=True)
    replaying = replayer(client, share_workflow_code=True)
    for history in histories:  # warm-up: imports and the sandbox's first module loads
        await replaying.replay_workflow(history)
    began, events = time.process_time(), 0
    for _ in range(rounds):
        for history in histories:
            await replaying.replay_workflow(history)
            events += len(history.events)
    return (time.process_time() - began) * 1000 * 1000 / events


def record(section: str, body: str) -> None:
    """Append a dated section to bench/RESULTS.md and print it."""
    stamp = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    text = f"\n## {section} ({stamp})\n\nMachine: {machine()}\n\n{body.strip()}\n"
    print(text)
    with RESULTS.open("a", encoding="utf-8") as out:
        out.write(text)


def percentile(values: list[float], q: float) -> float:
    """The ``q`` quantile (0..1) by nearest rank."""
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))
    return ordered[index]


@dataclass
class BenchStack:
    """Servers started for one benchmark run."""

    home: Path
    temporal_address: str
    dsn: str
    client: Client

    def settings(self, **overrides: object) -> Settings:
        values: dict[str, object] = {
            "home": self.home,
            "temporal_address": self.temporal_address,
            "database_url": self.dsn,
            "provider": "scripted",
            "embedded": False,
        }
        values.update(overrides)
        return Settings(**values)  # type: ignore[arg-type]


@asynccontextmanager
async def bench_stack(*, tuned: bool = True) -> AsyncIterator[BenchStack]:
    """Embedded PostgreSQL and a Temporal dev server (tuned or stock) in a temporary home."""
    with tempfile.TemporaryDirectory(prefix="persyn-bench-") as tmp:
        home = Path(tmp)
        home.chmod(0o755)
        pg = EmbeddedPostgres(home / "pg", free_port(), home / "logs" / "pg.log")
        pg.start()
        upgrade(pg.dsn)
        server, process = DevServer(
            port=0,
            ui_port=None,
            db_file=home / "temporal.db",
            log_file=home / "logs" / "temporal.log",
            dynamic_config=dict(LOW_LATENCY_CONFIG) if tuned else {},
        ).start_on_free_port(detached=False)
        address = f"127.0.0.1:{server.port}"
        try:
            settings = Settings(home=home, temporal_address=address, database_url=pg.dsn)
            client = await connect(settings, ready_within=20)
            await search_attributes.register(client)
            yield BenchStack(home=home, temporal_address=address, dsn=pg.dsn, client=client)
        finally:
            process.terminate()
            process.wait(10)
            pg.stop()


@asynccontextmanager
async def worker_process(
    stack: BenchStack, queue: str, env: dict[str, str] | None = None
) -> AsyncIterator[subprocess.Popen[bytes]]:
    """A real ``python -m workers.main`` on ``queue`` with the scripted (echo) model."""
    environment = {
        **os.environ,
        "PERSYN_HOME": str(stack.home),
        "PERSYN_TEMPORAL_ADDRESS": stack.temporal_address,
        "PERSYN_DATABASE_URL": stack.dsn,
        "PERSYN_PROVIDER": "scripted",
        "PERSYN_TASK_QUEUE": queue,
        "PERSYN_LOG_LEVEL": "WARNING",
        **(env or {}),
    }
    log = (stack.home / "logs" / f"worker-{queue}.log").open("ab")
    process = subprocess.Popen(
        [sys.executable, "-m", "workers.main"], env=environment, stdout=log, stderr=log
    )
    deadline = time.monotonic() + 60
    while not await has_pollers(stack.client, queue):
        if process.poll() is not None or time.monotonic() > deadline:
            raise RuntimeError(f"worker did not start: see {log.name}")
        await asyncio.sleep(0.05)
    try:
        yield process
    finally:
        process.terminate()
        process.wait(30)
        log.close()


async def new_agent(db: Database, prefix: str = "b", config: AgentConfig | None = None) -> str:
    """A fresh agent for one benchmark (handle ``{prefix}-<random>``)."""
    handle = f"{prefix}-{uuid.uuid4().hex[:8]}"
    spec = AgentCreate(
        handle=handle, name="Bench", persona="A benchmark agent.", config=config or AgentConfig()
    )
    async with db.session() as session:
        await create_agent(session, spec=spec)
    return handle


@asynccontextmanager
async def model_server(
    path: Path, *, context_tokens: int = 4096, log_dir: Path | None = None, cache_mib: int = 0
) -> AsyncIterator[ModelServer]:
    """llama.cpp's server for the GGUF at ``path`` in its own process, ready, then stopped."""
    with tempfile.TemporaryDirectory() as tmp:
        server = ModelServer(
            model_path=path,
            port=free_port(),
            context_tokens=context_tokens,
            chat_format=chat_format_for(path),
            log_file=(log_dir or Path(tmp)) / "model-server.log",
            cache_mib=cache_mib,
        )
        process = server.start(detached=False)
        try:
            await asyncio.to_thread(server.wait_ready, process, timeout=120)
            yield server
        finally:
            process.terminate()
            process.wait(10)


@contextmanager
def private_postgres(prefix: str) -> Iterator[EmbeddedPostgres]:
    """A migrated embedded PostgreSQL in a temporary directory, gone afterwards."""
    with tempfile.TemporaryDirectory(prefix=prefix) as tmp:
        Path(tmp).chmod(0o755)  # the server may run as another user (see store.embedded)
        server = EmbeddedPostgres(
            data_dir=Path(tmp) / "pg", port=free_port(), log_file=Path(tmp) / "pg.log"
        )
        server.start()
        try:
            upgrade(server.dsn)
            yield server
        finally:
            server.stop()
