"""The supervisor: ``python -m workers.supervisor``, started by ``persyn up``.

It owns the processes that can die on their own as its children: the worker, llama.cpp's
model server (when some task runs on the local model), the payload codec's endpoint and each
configured inbound channel process (:mod:`workers.channel_processes`). A child that exits for
any reason is started again after a delay that doubles with each quick failure
(``supervisor_backoff_seconds`` up to ``supervisor_backoff_max_seconds``; a run of a minute
resets it), and every exit and restart is logged in ``logs/supervisor.log`` and marked in the
child's own log. Children write to a pipe the supervisor copies to their logs with every line
cut to a readable length (:mod:`workers.output`): llama.cpp dumps a grammar it cannot compile
as one enormous line.
When the worker dies uncleanly, its runs are handed to the shared task queue while its
successor starts (:mod:`workers.unstick`), so their next tasks do not wait on its sticky queue.

SIGTERM (``persyn down``) stops the worker first, letting in-flight tasks finish (they may still
need the model), then the others, then the supervisor exits. Children get SIGTERM if the
supervisor itself is killed, so none outlives it. ``run/supervisor.json`` tells ``persyn up``
and ``persyn status`` what each child is doing (:mod:`workers.supervisor_state`).
"""

from __future__ import annotations

import contextlib
import ctypes
import logging
import os
import selectors
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from types import FrameType

from schemas.codec import get_codec_settings
from schemas.settings import Settings, get_settings
from store.private_files import PrivatePathError, open_private, replace_private
from workers import channel_processes, liveness, pidfile
from workers.channel_processes import ChannelProcess
from workers.model_server import ModelServerError, model_server, wanted
from workers.output import ChildOutput, spawn
from workers.process import (
    CODEC,
    MODEL_SERVER,
    SUPERVISOR,
    WORKER,
    last_line,
    log_file,
    pid_file,
)
from workers.standby import SpareKeeper
from workers.supervisor_state import ChildState, SupervisorState, describe_exit, state_file

log = logging.getLogger("persyn.supervisor")

STABLE_AFTER_S = 60.0
"""A child that ran this long before it died starts the backoff again from the beginning."""

STOP_GRACE_S = {WORKER: 25.0, MODEL_SERVER: 5.0, CODEC: 5.0}
"""How long each of the stack's own children may take to stop on SIGTERM before it is killed."""

_PR_SET_PDEATHSIG = 1


def stop_graces() -> dict[str, float]:
    """How long every child this supervisor may run, inbound channels included, may take to stop.

    Every registered channel counts, configured or not: a process started before its channel's
    settings were removed is still stopped.
    """
    return {**STOP_GRACE_S, **{p.name: p.stop_grace_s for p in channel_processes.REGISTRY}}


def backoff(settings: Settings, failures: int) -> float:
    """The delay before restarting a child that failed ``failures`` times in quick succession."""
    first, most = settings.supervisor_backoff_seconds, settings.supervisor_backoff_max_seconds
    return float(min(first * 2 ** min(failures - 1, 32), most))


@dataclass
class Child:
    """One supervised process and its restart bookkeeping."""

    name: str
    launch: Callable[[], list[str]]
    """The command line, computed at each start (it checks what the start needs)."""
    log_file: Path
    state: ChildState
    stop_grace_s: float = 5.0
    """How long it may take to stop on SIGTERM before it is killed."""
    process: subprocess.Popen[bytes] | None = None
    output: ChildOutput | None = None
    started_at: float = 0.0
    failures: int = 0
    restart_at: float | None = 0.0
    """Monotonic time of the next start; ``None`` while running or when it cannot start."""


def _die_with_parent() -> None:
    """In the child before exec: SIGTERM when the supervisor dies, however it dies."""
    if sys.platform.startswith("linux"):
        ctypes.CDLL(None).prctl(_PR_SET_PDEATHSIG, signal.SIGTERM)


class Supervisor:
    """Starts, watches and restarts the children; stops them on SIGTERM."""

    def __init__(self, settings: Settings, children: list[Child]) -> None:
        self.settings = settings
        self.children = children
        self.stopping = False
        self.unsticking: subprocess.Popen[bytes] | None = None
        """The run handing a dead worker's runs to the shared queue (:mod:`workers.unstick`)."""
        self.worker = next(c for c in children if c.name == WORKER)
        self.spares = SpareKeeper(
            enabled=settings.worker_standby,
            delay_s=settings.worker_standby_delay_seconds,
            launch=self.worker.launch,
            log_file=self.worker.log_file,
            preexec_fn=_die_with_parent,
        )
        """The worker's warm spare, promoted when it dies (:mod:`workers.standby`)."""
        self.me = pidfile.write(pid_file(settings, SUPERVISOR), os.getpid())

    # -- lifecycle ------------------------------------------------------------------------------

    def run(self) -> None:
        """Supervise until SIGTERM, SIGINT or SIGHUP; then stop every child."""
        for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
            signal.signal(sig, self._stop_requested)
        self._stop_orphans()
        self._write_state()
        while not self.stopping:
            changed = False
            for child in self.children:
                changed |= self._check(child)
            changed |= self._tend_spare()
            if self.spares.hand_over_lost():
                self._unstick_process()
            if changed:
                self._write_state()
            if self.unsticking is not None and self.unsticking.poll() is not None:
                self.unsticking = None
            self._pump(0.1)
        self._stop_children()

    def _pump(self, timeout: float) -> None:
        """Copy the children's output to their logs, waiting up to ``timeout`` for some."""
        outputs = {c.output.fd: c.output for c in self.children if c.output is not None}
        if self.spares.output is not None:
            outputs[self.spares.output.fd] = self.spares.output
        if not outputs:
            time.sleep(timeout)
            return
        with selectors.DefaultSelector() as selector:
            for fd in outputs:
                selector.register(fd, selectors.EVENT_READ)
            for key, _ in selector.select(timeout):
                outputs[key.fd].pump()

    def _stop_requested(self, signum: int, frame: FrameType | None) -> None:
        self.stopping = True

    def _stop_orphans(self) -> None:
        # Children of a supervisor that was killed outright got SIGTERM from the kernel; any
        # still finishing are waited for, so two workers never share a port or a beacon.
        for child in self.children:
            if pidfile.stop_file(pid_file(self.settings, child.name), timeout=child.stop_grace_s):
                log.info("stopped %s left by a previous supervisor", child.name)

    def _stop_children(self) -> None:
        self.spares.retire()
        for child in self.children:  # the worker first: its last tasks may need the model
            if child.process is not None and child.process.poll() is None:
                log.info("stopping %s (pid %d)", child.name, child.process.pid)
                self._stop(child, child.process)
            if child.output is not None:
                child.output.close()
                child.output = None
            pid_file(self.settings, child.name).unlink(missing_ok=True)
        state_file(self.settings).unlink(missing_ok=True)
        if (
            self.me is not None
            and pidfile.live_pid(pid_file(self.settings, SUPERVISOR)) == self.me.pid
        ):
            pid_file(self.settings, SUPERVISOR).unlink(missing_ok=True)
        log.info("supervisor stopped")

    def _stop(self, child: Child, process: subprocess.Popen[bytes]) -> None:
        """SIGTERM, copying its last words meanwhile; SIGKILL after its grace."""
        with contextlib.suppress(ProcessLookupError):
            process.terminate()
        deadline = time.monotonic() + child.stop_grace_s
        while process.poll() is None and time.monotonic() < deadline:
            self._pump(0.05)
        if process.poll() is None:
            process.kill()
            process.wait()

    # -- one child ------------------------------------------------------------------------------

    def _check(self, child: Child) -> bool:
        """Notice an exit or start a child that is due; whether anything changed."""
        now = time.monotonic()
        if child.process is not None:
            code = child.process.poll()
            if code is None:
                return False
            self._exited(child, code, now)
            return True
        if child.restart_at is not None and now >= child.restart_at:
            self._start(child, now)
            return True
        return False

    def _exited(self, child: Child, code: int, now: float) -> None:
        assert child.process is not None
        pid, ran = child.process.pid, now - child.started_at
        child.process = None
        if child.output is not None:
            child.output.close()  # its last words reach the log before we read them
            child.output = None
        pid_file(self.settings, child.name).unlink(missing_ok=True)
        if child.name == WORKER:
            liveness.forget(self.settings, pid)
            if code != 0:
                self._unstick()
        child.failures = 1 if ran >= STABLE_AFTER_S else child.failures + 1
        delay = backoff(self.settings, child.failures)
        child.restart_at = now + delay
        state = child.state
        state.pid = None
        state.last_exit, state.last_exit_code = describe_exit(code), code
        state.last_words = last_line(child.log_file)
        state.exited_at = datetime.now(UTC)
        state.restart_at = datetime.fromtimestamp(time.time() + delay, UTC)
        # Its last words say why it exited on its own; after a signal they say nothing.
        why = f": {state.last_words}" if code > 0 else ""
        log.warning(
            "%s (pid %d) died (%s) after %.1f s%s; restarting in %.1f s",
            child.name,
            pid,
            state.last_exit,
            ran,
            why,
            delay,
        )

    def _unstick(self) -> None:
        """Send the dead worker's runs to the shared queue while its successor starts.

        Their next tasks would otherwise wait on its sticky queue for up to 20 s. The waiting
        spare does it at once if there is one; otherwise a process does, beside the restart.
        Neither is retried if it fails: every task still reaches the shared queue after its
        timeout.
        """
        if not self.spares.unstick():
            self._unstick_process()

    def _unstick_process(self) -> None:
        """The hand-off as a process of its own (no spare, or one that died before it ran)."""
        if self.unsticking is not None and self.unsticking.poll() is None:
            return  # the previous one is still at it
        self.unsticking = subprocess.Popen(
            [sys.executable, "-m", "workers.unstick"],
            stdin=subprocess.DEVNULL,  # its lines go to the supervisor's own log
            preexec_fn=_die_with_parent,  # safe: the supervisor runs one thread
        )

    def _start(self, child: Child, now: float) -> None:
        state = child.state
        try:
            command = child.launch()
        except ModelServerError as err:
            child.restart_at = None  # nothing to retry until the setup changes
            state.error = str(err)
            log.error("cannot start %s: %s", child.name, err)
            return
        try:
            if state.last_exit is not None:
                # Whoever reads this log sees where one run ends and the next begins.
                with open_private(child.log_file, "ab") as out:
                    out.write(
                        f"--- restarted by the supervisor after {state.last_exit} ---\n".encode()
                    )
            spare = self.spares.take() if child is self.worker else None
            if spare is not None:
                child.process, child.output = spare.process, spare.output
            else:
                child.process, child.output = spawn(
                    command, child.log_file, preexec_fn=_die_with_parent
                )
        except PrivatePathError as err:
            child.restart_at = None  # a planted link stays until someone removes it
            state.error = str(err)
            log.error("cannot start %s: %s", child.name, err)
            return
        if child is self.worker:
            self.spares.worker_started(now)
        pidfile.write(pid_file(self.settings, child.name), child.process.pid)
        child.started_at, child.restart_at = now, None
        state.pid, state.restart_at, state.error = child.process.pid, None, None
        state.starts += 1
        if state.starts > 1:
            log.warning(
                "%s restarted (pid %d), restart %d%s",
                child.name,
                state.pid,
                state.restarts,
                ", from its spare" if spare is not None else "",
            )
        else:
            log.info("%s started (pid %d)", child.name, state.pid)

    def _tend_spare(self) -> bool:
        changed = self.spares.tend(worker_running=self.worker.process is not None)
        self.worker.state.standby_pid = self.spares.pid
        return changed

    def _write_state(self) -> None:
        state = SupervisorState(
            pid=os.getpid(), children={child.name: child.state for child in self.children}
        )
        replace_private(state_file(self.settings), state.model_dump_json(indent=1))


def _channel(settings: Settings, process: ChannelProcess) -> Child:
    """The child that runs an inbound channel's process (:mod:`workers.channel_processes`)."""
    return Child(
        name=process.name,
        launch=process.command,
        log_file=log_file(settings, process.name),
        state=ChildState(name=process.name),
        stop_grace_s=process.stop_grace_s,
    )


def children(settings: Settings) -> list[Child]:
    """The processes this home's supervisor runs.

    The worker; the model server if some task runs on the local model; the payload codec's
    endpoint if the codec is on; each registered inbound channel process its settings set up
    (:mod:`workers.channel_processes`).
    """
    worker = Child(
        name=WORKER,
        launch=lambda: [sys.executable, "-m", "workers.main"],
        log_file=log_file(settings, WORKER),
        state=ChildState(name=WORKER),
        stop_grace_s=STOP_GRACE_S[WORKER],
    )
    # The Web UI (and `temporal --codec-endpoint`) reads sealed payloads through it.
    codec: list[Child] = []
    if get_codec_settings().enabled:
        codec.append(
            Child(
                name=CODEC,
                launch=lambda: [sys.executable, "-m", "temporal.codec_server"],
                log_file=log_file(settings, CODEC),
                state=ChildState(name=CODEC),
                stop_grace_s=STOP_GRACE_S[CODEC],
            )
        )
    channels = [_channel(settings, process) for process in channel_processes.configured(settings)]
    if not wanted(settings):
        return [worker, *codec, *channels]

    def model_server_command() -> list[str]:
        server = model_server(settings)
        server.check()
        return server.command()

    server = Child(
        name=MODEL_SERVER,
        launch=model_server_command,
        log_file=log_file(settings, MODEL_SERVER),
        state=ChildState(name=MODEL_SERVER),
        stop_grace_s=STOP_GRACE_S[MODEL_SERVER],
    )
    return [worker, server, *codec, *channels]


MALLOC_ARENA_MAX = "2"
"""glibc heaps a child process may have (the environment's own setting wins)."""


def main() -> None:
    """Entry point."""
    logging.basicConfig(
        level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s"
    )
    settings = get_settings()
    # The children inherit it. glibc gives each thread that allocates its own heap (up to eight
    # per core), and memory freed in one is not reused by another, so a long-lived worker's
    # RSS can grow in steps it never gives back; two heaps bound that.
    os.environ.setdefault("MALLOC_ARENA_MAX", MALLOC_ARENA_MAX)
    supervisor = Supervisor(settings, children(settings))
    log.info("supervisor started (pid %d) for %s", os.getpid(), settings.home)
    supervisor.run()


if __name__ == "__main__":
    main()
