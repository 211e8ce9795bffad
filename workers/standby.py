"""A warm spare worker: imported and waiting, promoted the moment the worker dies.

A worker spends seconds importing its code before it connects (more on a busy machine), and
after a crash every agent waits those seconds. So the supervisor keeps a spare:
``python -m workers.main --standby-fd N`` imports everything, then blocks reading pipe ``N``.
When the worker dies, the supervisor writes one byte and the spare goes on to connect and
serve: it is the new worker. Before that, at the death itself and without waiting for the
restart's backoff, another byte asks the spare to hand the dead worker's runs to the shared
queue (:mod:`workers.unstick`): already loaded, it does that in a tenth of a second, where a
fresh process took a second to import, and every message reaching a run meanwhile waited 10 s
on the dead worker's sticky queue. The next spare starts once the new worker has served for
``worker_standby_delay_seconds``, so its imports do not compete with the recovery.

A spare holds no connection and takes no task; it costs its memory (the worker's imports,
about 170 MiB). It reads end of file and exits when the supervisor closes the pipe, and it gets
SIGTERM from the kernel if the supervisor dies. ``PERSYN_WORKER_STANDBY=false`` turns it off.
"""

from __future__ import annotations

import contextlib
import logging
import os
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from store.private_files import PrivatePathError
from workers.output import ChildOutput, spawn
from workers.supervisor_state import describe_exit

log = logging.getLogger("persyn.supervisor")

STANDBY_FLAG = "--standby-fd"
"""The worker's argument naming the pipe it waits on."""

PROMOTE = b"!"
"""The byte that promotes a spare."""

UNSTICK = b"u"
"""The byte that asks a spare to hand the dead worker's runs to the shared queue, and wait on."""

RETIRE_GRACE_S = 5.0
"""How long a retired spare may take to exit before it is killed."""


@dataclass
class Spare:
    """One waiting spare worker, its output on the way to the worker's log."""

    process: subprocess.Popen[bytes]
    output: ChildOutput
    promote_fd: int
    """The pipe's write end: ``PROMOTE`` promotes the spare, ``UNSTICK`` asks it to hand the
    dead worker's runs to the shared queue, closing it lets the spare go."""
    asked_to_unstick: bool = False
    """Whether it was asked to hand over: if it dies a spare, the hand-off may not have run."""

    def alive(self) -> bool:
        """Whether the spare is still waiting (it may have died on its own)."""
        return self.process.poll() is None

    def promote(self) -> None:
        """Tell the spare to connect and serve."""
        os.write(self.promote_fd, PROMOTE)
        os.close(self.promote_fd)

    def unstick(self) -> None:
        """Ask the spare to hand the dead worker's runs to the shared queue, then wait on."""
        os.write(self.promote_fd, UNSTICK)
        self.asked_to_unstick = True

    def retire(self) -> None:
        """Let the spare go: it reads end of file and exits; killed if it has not."""
        with contextlib.suppress(OSError):
            os.close(self.promote_fd)
        try:
            self.process.wait(RETIRE_GRACE_S)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        self.output.close()


def start_spare(command: list[str], log_file: Path, preexec_fn: Callable[[], None]) -> Spare:
    """Start a spare of the worker ``command``; its output goes to ``log_file``."""
    read_fd, write_fd = os.pipe()  # neither end is inherited unless passed
    try:
        process, output = spawn(
            [*command, STANDBY_FLAG, str(read_fd)],
            log_file,
            preexec_fn=preexec_fn,
            pass_fds=(read_fd,),
        )
    except BaseException:
        os.close(write_fd)
        raise
    finally:
        os.close(read_fd)
    return Spare(process=process, output=output, promote_fd=write_fd)


class SpareKeeper:
    """The supervisor's side: starts the worker's spare when due, hands it over, lets it go.

    Args:
        enabled: Whether to keep a spare at all (``worker_standby``).
        delay_s: How long a worker serves before its spare starts.
        launch: The worker's command line.
        log_file: The worker's log, which the spare shares.
        preexec_fn: Run in the spare before exec (it dies with the supervisor).
    """

    def __init__(
        self,
        *,
        enabled: bool,
        delay_s: float,
        launch: Callable[[], list[str]],
        log_file: Path,
        preexec_fn: Callable[[], None],
    ) -> None:
        self.enabled, self.delay_s = enabled, delay_s
        self.launch, self.log_file, self.preexec_fn = launch, log_file, preexec_fn
        self.spare: Spare | None = None
        self.due: float | None = None
        """Monotonic time the next spare starts; ``None`` while one waits or none is wanted."""
        self._hand_over_lost = False

    @property
    def pid(self) -> int | None:
        """The waiting spare's PID."""
        return self.spare.process.pid if self.spare is not None else None

    @property
    def output(self) -> ChildOutput | None:
        """The waiting spare's output, for the supervisor to copy to the log."""
        return self.spare.output if self.spare is not None else None

    def worker_started(self, now: float) -> None:
        """A worker (new or promoted) started at ``now``: its spare is due after the delay."""
        if self.enabled:
            self.due = now + self.delay_s

    def unstick(self) -> bool:
        """Have the waiting spare hand the dead worker's runs over; whether one was there."""
        if self.spare is None or not self.spare.alive():
            return False
        try:
            self.spare.unstick()
        except OSError:  # it exited between the check and the write
            return False
        return True

    def take(self) -> Spare | None:
        """The waiting spare, promoted, or ``None`` if there is none alive."""
        spare, self.spare = self.spare, None
        if spare is None:
            return None
        if not spare.alive():
            self._discard(spare)
            return None
        spare.promote()
        return spare

    def hand_over_lost(self) -> bool:
        """Whether a spare died after it was asked to hand over (each loss is told once).

        Killed a moment before the worker, a spare still looks alive until the kernel is done
        with it, and the hand-off written to its pipe is never read. The supervisor then runs
        it itself: resetting the runs again is harmless.
        """
        lost, self._hand_over_lost = self._hand_over_lost, False
        return lost

    def _discard(self, spare: Spare) -> None:
        spare.output.close()
        self._hand_over_lost |= spare.asked_to_unstick

    def tend(self, worker_running: bool) -> bool:
        """Start the spare when due, notice one that died; whether anything changed."""
        now = time.monotonic()
        if self.spare is not None:
            if self.spare.alive():
                return False
            log.warning(
                "the worker's spare (pid %d) died (%s)",
                self.spare.process.pid,
                describe_exit(self.spare.process.returncode),
            )
            self._discard(self.spare)
            self.spare = None
            self.worker_started(now)
            return True
        if self.due is None or now < self.due or not worker_running:
            return False
        self.due = None
        try:
            self.spare = start_spare(self.launch(), self.log_file, self.preexec_fn)
        except PrivatePathError as err:  # the worker's log became a link: no spare, no crash
            log.error("cannot start the worker's spare: %s", err)
            return False
        log.info("worker spare started (pid %d)", self.spare.process.pid)
        return True

    def retire(self) -> None:
        """Let the waiting spare go (the supervisor stops)."""
        if self.spare is not None:
            self.spare.retire()
            self.spare = None
        self.due = None


def wait_for_promotion(argv: list[str], unstick: Callable[[], object] | None = None) -> bool:
    """In the worker: with ``--standby-fd N``, wait until promoted; whether to serve.

    Without the flag the worker serves at once. With it, ``PROMOTE`` on the pipe means serve,
    end of file (the supervisor let the spare go, or died) means exit, and ``UNSTICK`` calls
    ``unstick`` and goes on waiting.
    """
    if STANDBY_FLAG not in argv:
        return True
    fd = int(argv[argv.index(STANDBY_FLAG) + 1])
    try:
        while (byte := os.read(fd, 1)) == UNSTICK:
            if unstick is not None:
                unstick()
        return byte != b""
    finally:
        os.close(fd)
