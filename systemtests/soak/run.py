"""One soak run: agents talking on the embedded stack while its processes are killed.

:func:`run_soak` starts a private stack with ``persyn up``, creates the agents (deleting one's
heartbeat), drives the traffic, injects one ``kill -9`` at a time (each kind in turn, in a
shuffled order, at random moments: the pipeline step it lands on is whatever the agents are
doing), restores each as an operator would, samples the invariants while it runs and judges
them all at the end. The caller prints or records the :class:`SoakReport`.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import random
import time
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path

import psutil
from temporalio.client import Client

from schemas.agents import AgentConfig, AgentCreate
from store.db import Database
from systemtests.soak import checks
from systemtests.soak.hostile import HostileSent, HostileTraffic, hostile_violations
from systemtests.soak.load import Sent, Traffic
from systemtests.soak.retention import RUN_RECORD_TABLES, MonthLater, month_later
from systemtests.soak.script import soak_script
from systemtests.soak.stack import FaultKind, SoakStack
from temporal.client import connect
from usecases.agents import create_agent
from usecases.heartbeats import delete_heartbeat

log = logging.getLogger("persyn.systemtests.soak")


@dataclass(frozen=True)
class SoakConfig:
    """How long, how many agents, which faults."""

    agents: int = 20
    minutes: float = 60.0
    provider: str = "scripted"
    seed: int = 1
    fault_gap_s: tuple[float, float] = (40.0, 90.0)
    quiet_end_s: float = 60.0
    """No fault in the run's last minute: each fault gets a window to show its recovery."""
    kinds: tuple[FaultKind, ...] = tuple(FaultKind)
    check_every_s: float = 20.0
    idle_minutes: float = 0.5
    session_pause_s: tuple[float, float] = (35.0, 70.0)
    cull_after_minutes: float = 3.0
    grace_s: float = 240.0
    hostile_every_s: float | None = None
    """Send a hostile event (``systemtests.soak.hostile``) this often; ``None``: none."""


@dataclass
class Fault:
    """One injected fault and how the stack came back."""

    kind: FaultKind
    at: float
    pid: int | None
    restore_s: float = 0.0
    error: str | None = None


@dataclass
class SoakReport:
    """Everything the run measured; :mod:`systemtests.soak.report` renders it."""

    config: SoakConfig
    duration_s: float
    sent: list[Sent]
    faults: list[Fault]
    violations: list[str]
    samples: checks.Samples
    redone_events: int = 0
    native_restarts: dict[str, int] = field(default_factory=dict)
    submit_errors: dict[str, int] = field(default_factory=dict)
    memory: checks.MemoryState | None = None
    month_later: MonthLater | None = None
    """The run records a purge left when every retention window had passed."""
    logs: Path | None = None
    hostile: list[HostileSent] = field(default_factory=list)
    began: float = 0.0
    """Monotonic time the run began: the samples' times count from it, the faults' do not."""


def stack_environment(config: SoakConfig, home: Path) -> dict[str, str]:
    """Settings that compress a week: short idle, fast culling, frequent heartbeats."""
    env = {
        "PERSYN_MEMORY__CULL_AFTER_DAYS": f"{config.cull_after_minutes / (24 * 60):.6f}",
        "PERSYN_MEMORY__MAINTENANCE_MINUTES": "1",
        "PERSYN_AUTONOMY__HEARTBEAT_INTERVAL_MINUTES": "2",
        "PERSYN_AUTONOMY__HEARTBEAT_JITTER_MINUTES": "0",
    }
    if config.provider == "scripted":
        env["PERSYN_SCRIPTED_SCRIPT"] = str(soak_script(home / "soak-script.json"))
    return env


class SoakRun:
    """The state of one run; :func:`run_soak` is the way in."""

    def __init__(self, config: SoakConfig, home: Path) -> None:
        self.config = config
        self.rng = random.Random(config.seed)
        self.stack = SoakStack.create(
            home, provider=config.provider, extra_env=stack_environment(config, home)
        )
        self.handles = [f"soak-{i:02d}" for i in range(config.agents)]
        self.probe = "soak-probe"
        self.sleeper = self.handles[0]
        self.faults: list[Fault] = []
        self.samples = checks.Samples()
        self.violations: dict[str, None] = {}  # ordered, without repeats
        self.important_seen: set[str] = set()
        self.restoring = False
        self.began = time.monotonic()  # the run begins with its construction
        self._client: Client | None = None
        self.db = Database(self.stack.settings.database_dsn(), pool_size=2)
        self.hostile = HostileTraffic(
            client=self.client,
            handles=self.handles,
            rng=random.Random(config.seed + 2),
            every_s=config.hostile_every_s or 0.0,
        )
        self.traffic = Traffic(
            client=self.client,
            handles=self.handles,
            task_queue=self.stack.settings.task_queue,
            rng=random.Random(config.seed + 1),
            session_pause_s=config.session_pause_s,
            probe=self.probe,
        )

    async def client(self) -> Client:
        if self._client is None:
            self._client = await connect(self.stack.settings, ready_within=30)
        return self._client

    def flag(self, found: list[str]) -> None:
        for violation in found:
            self.violations.setdefault(violation)

    async def setup(self) -> None:
        await asyncio.to_thread(self.stack.up)
        settings = self.stack.settings
        for handle in [*self.handles, self.probe]:
            # The probe only measures latency: its one conversation stays open (default idle).
            idle = AgentConfig().idle_minutes if handle == self.probe else self.config.idle_minutes
            spec = AgentCreate(
                handle=handle,
                name=handle.title(),
                persona="A patient agent under a long test.",
                config=AgentConfig(idle_minutes=idle),
            )
            await create_agent(settings=settings, spec=spec)
        # One agent sleeps: its heartbeat must stay deleted through every restart.
        await delete_heartbeat(settings=settings, handle=self.sleeper)

    async def inject(self, deadline: float) -> None:
        """One fault at a time, each kind in turn, until ``deadline``."""
        order: list[FaultKind] = []
        while True:
            gap = self.rng.uniform(*self.config.fault_gap_s)
            if time.monotonic() + gap > deadline - self.config.quiet_end_s:
                return
            await asyncio.sleep(gap)  # the soak's schedule, not a wait for a condition
            if not order:
                order = list(self.config.kinds)
                self.rng.shuffle(order)
            kind = order.pop()
            fault = Fault(kind=kind, at=time.monotonic(), pid=self.stack.kill(kind))
            self.faults.append(fault)
            log.warning("killed %s (pid %s)", kind.value, fault.pid)
            self.restoring = True
            try:
                began = time.monotonic()
                await asyncio.to_thread(self.stack.restart_after, kind)
                fault.restore_s = time.monotonic() - began
            except Exception as err:
                fault.error = str(err)
                self.flag([f"{kind.value} did not come back: {err}"])
            finally:
                self.restoring = False

    async def sample(self, stop: asyncio.Event) -> None:
        """Sample and check continuously until ``stop``."""
        while not stop.is_set():
            if not self.restoring:
                try:
                    await self.check_once()
                except Exception as err:  # an outage under way: the next sample tries again
                    log.info("sample skipped: %s", err)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), self.config.check_every_s)

    async def check_once(self) -> None:
        # Busy share of all cores since the previous sample: a saturated machine explains
        # latency that no fault does.
        self.samples.cpu.append((time.monotonic() - self.began, psutil.cpu_percent(interval=None)))
        client = await self.client()
        rss = self.stack.worker_rss_kib()
        if rss is not None:
            self.samples.rss.setdefault(rss[0], []).append(rss[1])
        everyone = [*self.handles, self.probe]
        for handle, length in (await checks.history_lengths(client, everyone)).items():
            self.samples.history.setdefault(handle, []).append(length)
        answered = sum(1 for s in self.traffic.sent if s.done is not None)
        self.samples.tables.append((answered, await checks.table_counts(self.db)))
        self.flag(await checks.heartbeat_violations(self.db, client, self.sleeper))
        self.flag(await checks.stuck_workflows(client))
        state = await self.memory()
        self.important_seen |= state.important_ids

    async def memory(self) -> checks.MemoryState:
        # Overdue: older than the cutoff plus two maintenance periods and a minute of slack.
        overdue = timedelta(minutes=self.config.cull_after_minutes + 3)
        return await checks.memory_state(
            self.db,
            self.handles,
            below=self.stack.settings.memory.cull_below,
            overdue_after=overdue,
        )

    async def finish(self) -> checks.MemoryState:
        """The end-of-run judgement over everything sent and sampled."""
        # Connections pooled before the last PostgreSQL kill are dead: start from fresh ones.
        await self.db.engine.dispose()
        client = await self.client()
        unique_replies = self.config.provider == "scripted"
        sent = self.traffic.sent
        delivery = await checks.delivery_violations(self.db, sent)
        if not unique_replies:
            delivery = [v for v in delivery if not v.startswith(("reply recorded", "reply queued"))]
        self.flag(delivery)
        self.flag(await hostile_violations(self.db, self.hostile.sent))
        self.flag(await checks.heartbeat_violations(self.db, client, self.sleeper))
        self.flag(await checks.stuck_workflows(client))
        state = await self.memory()
        lost = self.important_seen - state.important_ids
        self.flag([f"important memory {m} was culled" for m in sorted(lost)])
        if state.overdue_low:
            self.flag([f"culling lags: {state.overdue_low} low-rated memories are overdue"])
        if state.person_turns and state.live >= state.person_turns:
            self.flag(
                [f"memory store not smaller: {state.live} records for {state.person_turns} turns"]
            )
        self.flag(self.samples.rss_violations())
        longest = self.samples.longest_history()
        if longest > checks.HISTORY_LIMIT:
            self.flag([f"an agent's history reached {longest} events"])
        for table, rate in self.samples.growing_tables().items():
            if table not in RUN_RECORD_TABLES:  # bounded by a window of days: judged last
                self.flag([f"table {table} grows {rate:.2f} rows per message"])
        return state

    async def run(self) -> SoakReport:
        await self.setup()
        deadline = time.monotonic() + self.config.minutes * 60
        stop = asyncio.Event()
        talking = asyncio.create_task(self.traffic.run())
        attacking = asyncio.create_task(self.hostile.run()) if self.config.hostile_every_s else None
        sampling = asyncio.create_task(self.sample(stop))
        await self.inject(deadline)
        await asyncio.sleep(max(0.0, deadline - time.monotonic()))  # the rest of the run
        self.traffic.stopping.set()
        self.hostile.stopping.set()
        if attacking is not None:
            await attacking
        try:
            await asyncio.wait_for(talking, self.config.grace_s)
        except TimeoutError:
            log.warning("some messages were still unanswered after the grace period")
        stop.set()
        await sampling
        memory = await self.finish()
        restarts = self.stack.supervisor_restarts()
        injected = sum(1 for f in self.faults if f.kind is FaultKind.WORKER)
        native = {name: n for name, n in restarts.items() if name != "worker" and n}
        if restarts.get("worker", 0) > injected:
            native["worker"] = restarts["worker"] - injected
        redone = await checks.activations_per_event(self.db, self.traffic.sent)
        # Last: it deletes the run records every check above has read.
        later = await month_later(self.db, [*self.handles, self.probe], self.stack.settings)
        self.flag(later.violations())
        return SoakReport(
            config=self.config,
            duration_s=time.monotonic() - self.began,
            sent=list(self.traffic.sent),
            faults=self.faults,
            violations=list(self.violations),
            samples=self.samples,
            redone_events=redone,
            native_restarts=native,
            submit_errors=dict(self.traffic.errors),
            memory=memory,
            month_later=later,
            logs=self.stack.settings.log_dir,
            hostile=list(self.hostile.sent),
            began=self.began,
        )

    async def close(self) -> None:
        await self.db.aclose()
        self._client = None
        await asyncio.to_thread(self.stack.down)


async def run_soak(config: SoakConfig, home: Path) -> SoakReport:
    """Run one soak in ``home`` (a fresh directory) and stop its stack afterwards."""
    run = SoakRun(config, home)
    try:
        return await run.run()
    finally:
        await run.close()
