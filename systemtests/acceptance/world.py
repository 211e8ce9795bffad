"""The acceptance run's world: a private stack every process of which can be restarted.

PostgreSQL (data directory) and the Temporal dev server (SQLite file) live in a temporary home;
the worker runs in this process with the chosen providers, so the scripted run can read the
requests its model received. :meth:`World.restart` stops the worker, Temporal and PostgreSQL
and starts them again on the same data, which is what "a full restart of every process" means
for everything but the runner itself (the person's side of the conversation).
"""

from __future__ import annotations

import gc
import subprocess
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path

from temporalio.client import Client
from temporalio.worker import Worker

from activities.gateway.base import Provider
from activities.gateway.providers.scripted import ScriptedProvider
from schemas.agents import AgentConfig, AgentCreate, AgentPublic
from schemas.events import ChannelRef, InboundEvent, Receipt, Speaker
from schemas.ids import new_ulid
from schemas.models import ProviderName
from schemas.settings import Settings
from store.db import Database
from store.embedded import EmbeddedPostgres
from store.migrate import upgrade
from temporal import inbox, search_attributes
from temporal.client import connect
from temporal.devserver import DevServer, free_port
from usecases.agents import create_agent
from workers.build import Dependencies, build_dependencies, build_worker
from workers.model_server import model_server

TASK_QUEUE = "acceptance"


@dataclass
class World:
    """Servers, a worker and helpers to talk to agents as a person would."""

    home: Path
    overrides: dict[str, object]
    providers: dict[ProviderName, Provider] | None
    pg: EmbeddedPostgres = field(init=False)
    server: DevServer = field(init=False)
    restarts: int = 0
    _process: subprocess.Popen[bytes] | None = None
    _model: subprocess.Popen[bytes] | None = None
    _client: Client | None = None
    _deps: Dependencies | None = None
    _worker: Worker | None = None
    _stack: AsyncExitStack | None = None

    def __post_init__(self) -> None:
        self.model_port = free_port()
        self.pg = EmbeddedPostgres(self.home / "pg", free_port(), self.home / "logs" / "pg.log")
        self.server = DevServer(
            port=free_port(),
            ui_port=None,
            db_file=self.home / "temporal.db",
            log_file=self.home / "logs" / "temporal.log",
        )

    @property
    def settings(self) -> Settings:
        values: dict[str, object] = {
            "home": self.home,
            "temporal_address": f"127.0.0.1:{self.server.port}",
            "database_url": self.pg.dsn,
            "embedded": False,
            "task_queue": TASK_QUEUE,
            "provider": "scripted",
            "local_model_port": self.model_port,
            **self.overrides,
        }
        return Settings(**values)  # type: ignore[arg-type]

    @property
    def client(self) -> Client:
        assert self._client is not None, "the world is not running"
        return self._client

    @property
    def db(self) -> Database:
        assert self._deps is not None, "the world is not running"
        return self._deps.db

    @property
    def scripted(self) -> ScriptedProvider | None:
        """The scripted model, when this run uses one."""
        found = (self.providers or {}).get(ProviderName.SCRIPTED)
        return found if isinstance(found, ScriptedProvider) else None

    async def start(self) -> None:
        """Start PostgreSQL, Temporal and the worker (on data a previous start left)."""
        self.pg.start()
        upgrade(self.pg.dsn)
        self._process = self.server.start(detached=False)
        settings = self.settings
        if settings.provider == "local":
            # llama.cpp in its own process, as the stack runs it: a native crash stays there.
            server = model_server(settings)
            self._model = server.start(detached=False)
            server.wait_ready(self._model, timeout=180)
        self._client = await connect(settings, ready_within=30)
        await search_attributes.register(self._client)
        self._deps = build_dependencies(settings, providers=self.providers, dsn=self.pg.dsn)
        self._worker = build_worker(self._client, self._deps, task_queue=TASK_QUEUE)
        self._stack = AsyncExitStack()
        await self._stack.enter_async_context(self._worker)

    async def stop(self) -> None:
        """Stop the worker (letting its tasks finish), then Temporal, then PostgreSQL."""
        if self._stack is not None:
            await self._stack.aclose()
            self._stack = None
        if self._deps is not None:
            await self._deps.aclose()
            self._deps = None
        self._client = None
        gc.collect()
        if self._process is not None:
            self._process.terminate()
            self._process.wait(20)
            self._process = None
        self.pg.stop()
        if self._model is not None:
            self._model.terminate()
            self._model.wait(20)
            self._model = None

    async def restart(self) -> None:
        """A full restart of every process the agents run on."""
        await self.stop()
        await self.start()
        self.restarts += 1

    async def new_agent(self, handle: str, *, config: AgentConfig | None = None) -> AgentPublic:
        """Create an agent the way ``persyn agent create`` does (heartbeat and maintenance)."""
        spec = AgentCreate(
            handle=handle,
            name=handle.title(),
            persona="A thoughtful agent with a long memory, who says plainly when it disagrees.",
            config=config or AgentConfig(),
        )
        return await create_agent(settings=self.settings, spec=spec)

    async def say(
        self, handle: str, text: str, *, channel: ChannelRef, speaker: str = "ada"
    ) -> Receipt:
        """One message from ``speaker`` on ``channel``; the receipt once the agent is done."""
        event = InboundEvent(
            event_id=new_ulid(),
            channel=channel,
            speaker=Speaker(speaker_id=speaker, display_name=speaker.title()),
            text=text,
        )
        return await inbox.submit(self.client, handle=handle, event=event, task_queue=TASK_QUEUE)


@asynccontextmanager
async def world(
    home: Path,
    *,
    providers: dict[ProviderName, Provider] | None,
    overrides: dict[str, object] | None = None,
) -> AsyncIterator[World]:
    """A started world in ``home``, stopped afterwards."""
    running = World(home=home, overrides=dict(overrides or {}), providers=providers)
    await running.start()
    try:
        yield running
    finally:
        await running.stop()
