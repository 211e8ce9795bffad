"""Test harness: the real stack (embedded PostgreSQL, Temporal dev server) started by Persyn's
own launchers, and workers with a scripted model on private task queues."""

from __future__ import annotations

import asyncio
import inspect
import os
import sysconfig
import time
import uuid
from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path

from temporalio.client import Client, WorkflowHistory
from temporalio.contrib.pydantic import pydantic_data_converter
from temporalio.testing import WorkflowEnvironment
from temporalio.worker import Replayer, Worker

from activities.gateway.base import Provider
from activities.gateway.providers.scripted import Script, ScriptedProvider, ScriptRule
from activities.memory.encoders.local import LocalEncoder
from observability.metering.hub import UsageMeter
from schemas.agents import AgentConfig, AgentCreate, AgentPublic
from schemas.codec import get_codec_settings
from schemas.events import ChannelRef, InboundEvent, Receipt, Speaker
from schemas.ids import new_ulid
from schemas.models import ProviderName
from schemas.settings import Settings
from store.db import Database
from store.queries.agents import create_agent
from temporal import inbox, search_attributes
from temporal.client import interceptors
from workers import replay
from workers.build import Dependencies, build_dependencies, build_worker

# The payload codec is on by default in production. The suite runs without it except where a
# test asks for it: tests/codec/ and tests/integration/ (workers with the codec, the CLI through
# the codec endpoint) connect with codec=True. Its cost is small (docs/codec.md, Tests), but the
# tests that start a stack of their own must first give its codec endpoint a free port and
# expect it among the components before the default here can follow production.
os.environ.setdefault("PERSYN_CODEC_ENABLED", "false")
# The emotion classifier is on in production: one more model call after every reply. Tests
# that script a provider by counting its calls would see it, so the suite runs without it
# except where a test asks for it (tests/emotion/, with emotion={"enabled": True}).
os.environ.setdefault("PERSYN_EMOTION__ENABLED", "false")


@dataclass
class Stack:
    """Addresses of the servers the session started."""

    temporal_address: str
    dsn: str
    home: Path

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


async def until(predicate: Callable[[], object], *, timeout: float = 60.0) -> None:
    """Wait on a condition the test cannot await directly (never a fixed sleep).

    ``predicate`` may return a value or an awaitable; waiting fails after ``timeout`` seconds.
    """
    deadline = time.monotonic() + timeout
    while True:
        result = predicate()
        if inspect.isawaitable(result):
            result = await result
        if result:
            return
        if time.monotonic() > deadline:
            raise AssertionError(f"gave up waiting after {timeout:g} s")
        await asyncio.sleep(0.05)


def unique(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:10]}"


def terminal(channel: str = "tty") -> ChannelRef:
    return ChannelRef(service="terminal", channel=channel)


def event(
    text: str,
    *,
    speaker: str = "ada",
    channel: ChannelRef | None = None,
    addressed: bool = True,
    event_id: str | None = None,
) -> InboundEvent:
    return InboundEvent(
        event_id=event_id or new_ulid(),
        channel=channel or terminal(),
        speaker=Speaker(speaker_id=speaker, display_name=speaker.title()),
        text=text,
        addressed=addressed,
    )


@dataclass
class Harness:
    """A running worker on its own task queue, with helpers to talk to agents."""

    client: Client
    task_queue: str
    deps: Dependencies
    provider: ScriptedProvider
    worker: Worker
    db: Database

    async def create_agent(
        self,
        handle: str | None = None,
        *,
        name: str = "Persyn Test",
        persona: str | None = None,
        config: AgentConfig | None = None,
    ) -> AgentPublic:
        spec = AgentCreate(
            handle=handle or unique("agent"),
            name=name,
            persona=persona or "A careful, curious test agent who answers briefly.",
            config=config or AgentConfig(),
        )
        async with self.db.session() as session:
            return await create_agent(session, spec=spec)

    async def say(
        self,
        handle: str,
        text: str,
        *,
        speaker: str = "ada",
        channel: ChannelRef | None = None,
        addressed: bool = True,
    ) -> Receipt:
        ev = event(text, speaker=speaker, channel=channel, addressed=addressed)
        return await inbox.submit(self.client, handle=handle, event=ev, task_queue=self.task_queue)

    async def send(self, handle: str, ev: InboundEvent) -> Receipt:
        return await inbox.submit(self.client, handle=handle, event=ev, task_queue=self.task_queue)


_session_encoder: LocalEncoder | None = None


def session_encoder() -> LocalEncoder:
    """The test session's one local encoder; its ONNX model loads once, on first use.

    Every worker the tests start shares it: a worker per test would otherwise load its own
    copy of the model (tenths of a second and about 100 MB each).
    """
    global _session_encoder
    if _session_encoder is None:
        _session_encoder = LocalEncoder()
    return _session_encoder


async def close_session_encoder() -> None:
    """Stop the shared encoder's inference thread (the session's last fixture does)."""
    global _session_encoder
    if _session_encoder is not None:
        await _session_encoder.aclose()
        _session_encoder = None


def dependencies(
    settings: Settings,
    *,
    providers: dict[ProviderName, Provider],
    meters: list[UsageMeter] | None = None,
    dsn: str,
) -> Dependencies:
    """``build_dependencies`` as a worker calls it, but with the session's local encoder.

    Release them with :func:`close_dependencies`, which leaves the shared encoder running.
    """
    deps = build_dependencies(settings, providers=providers, meters=meters, dsn=dsn)
    if isinstance(deps.encoder, LocalEncoder):
        # Built but never loaded: dropping it costs nothing.
        deps.encoder = session_encoder()
    return deps


async def close_dependencies(deps: Dependencies) -> None:
    """Close what :func:`dependencies` built, except the encoder the session shares."""
    if deps.encoder is _session_encoder:
        deps.encoder = None
    await deps.aclose()


@asynccontextmanager
async def running_worker(
    client: Client,
    stack: Stack,
    *,
    rules: list[ScriptRule] | None = None,
    providers: dict[ProviderName, Provider] | None = None,
    meters: list[UsageMeter] | None = None,
    settings_overrides: dict[str, object] | None = None,
    task_queue: str | None = None,
) -> AsyncIterator[Harness]:
    """A worker with a scripted model (echo by default) on a private task queue."""
    settings = stack.settings(**(settings_overrides or {}))
    provider = ScriptedProvider(Script(rules=rules or []))
    deps = dependencies(
        settings,
        providers=providers or {ProviderName.SCRIPTED: provider},
        meters=meters,
        dsn=stack.dsn,
    )
    queue = task_queue or unique("tq")
    worker = build_worker(client, deps, task_queue=queue)
    async with worker:
        yield Harness(
            client=client, task_queue=queue, deps=deps, provider=provider, worker=worker, db=deps.db
        )
    await close_dependencies(deps)


def record_new_histories(
    directory: Path,
    histories: Mapping[str, WorkflowHistory],
    *,
    text: Callable[[WorkflowHistory], str] = WorkflowHistory.to_json,
) -> None:
    """With ``PERSYN_RECORD_HISTORIES=1``, write each history that has no file yet.

    A recorded history is never overwritten: it stands for runs already out there, and a
    change to workflow code must keep replaying it (``workflow.patched``). Only a new
    workflow or a new path gets a new file, or one deleted by hand because a deprecated patch
    left it the history of a run that can no longer exist (docs/operations.md, "The life of
    a patch").
    """
    if os.environ.get("PERSYN_RECORD_HISTORIES") != "1":
        return
    if get_codec_settings().enabled:
        # Sealed with this session's keys, which go with it: no later run could replay them.
        raise RuntimeError("record histories with PERSYN_CODEC_ENABLED=false")
    directory.mkdir(exist_ok=True)
    for name, history in histories.items():
        path = directory / f"{name}.json"
        if not path.exists():
            path.write_text(text(history))


def replayer(client: Client) -> Replayer:
    """A replayer built from ``client`` as a worker is: its converter, codec, interceptors."""
    return replay.replayer(client)


async def start_time_skipping() -> WorkflowEnvironment:
    """Temporal's time-skipping test server (from its wheel), with Persyn's search attributes."""
    server = Path(sysconfig.get_path("scripts")) / "temporal-test-server"
    env = await WorkflowEnvironment.start_time_skipping(
        data_converter=pydantic_data_converter,
        interceptors=interceptors(),
        test_server_existing_path=str(server),
    )
    await search_attributes.register(env.client)
    return env
