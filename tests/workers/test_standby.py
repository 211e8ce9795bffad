"""The worker's warm spare (``workers/standby.py``), with a stand-in for the worker.

The stand-in does what ``workers.main`` does with ``--standby-fd``: it waits for promotion,
then says whether it would serve. The supervised stack's test kills a real worker and sees its
spare take over (``tests/workers/test_supervision.py``).
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

from workers.standby import SpareKeeper, start_spare, wait_for_promotion

STAND_IN = [
    sys.executable,
    "-c",
    "import sys\n"
    "from workers.standby import wait_for_promotion\n"
    "def unstick():\n"
    "    print('handing over', flush=True)\n"
    "print('serving' if wait_for_promotion(sys.argv[1:], unstick) else 'let go', flush=True)\n",
]


def _no_preexec() -> None:
    return None


def test_a_promoted_spare_serves(tmp_path: Path) -> None:
    log = tmp_path / "worker.log"
    spare = start_spare(STAND_IN, log, _no_preexec)
    assert spare.alive()
    spare.promote()
    assert spare.process.wait(30) == 0
    spare.output.close()
    assert log.read_text().strip() == "serving"


def test_a_retired_spare_exits_without_serving(tmp_path: Path) -> None:
    log = tmp_path / "worker.log"
    spare = start_spare(STAND_IN, log, _no_preexec)
    spare.retire()
    assert spare.process.returncode == 0
    assert log.read_text().strip() == "let go"


def test_a_spare_hands_the_dead_workers_runs_over_and_waits_on(tmp_path: Path) -> None:
    log = tmp_path / "worker.log"
    spare = start_spare(STAND_IN, log, _no_preexec)
    spare.unstick()
    spare.unstick()  # another death before it was promoted: it hands over again
    assert spare.alive()  # still waiting: handing over is not being promoted
    spare.promote()
    assert spare.process.wait(30) == 0
    spare.output.close()
    assert log.read_text().split() == ["handing", "over", "handing", "over", "serving"]


def test_the_keeper_has_its_spare_hand_over_or_says_there_is_none(tmp_path: Path) -> None:
    keeper = _keeper(tmp_path)
    assert keeper.unstick() is False  # no spare: the supervisor runs the hand-off itself
    keeper.worker_started(time.monotonic())
    assert keeper.tend(worker_running=True) is True
    assert keeper.unstick() is True
    keeper.retire()
    assert (tmp_path / "worker.log").read_text().split() == ["handing", "over", "let", "go"]
    assert keeper.unstick() is False


def test_without_the_flag_the_worker_serves_at_once() -> None:
    assert wait_for_promotion([]) is True


def _keeper(tmp_path: Path, *, enabled: bool = True, delay_s: float = 0.0) -> SpareKeeper:
    return SpareKeeper(
        enabled=enabled,
        delay_s=delay_s,
        launch=lambda: list(STAND_IN),
        log_file=tmp_path / "worker.log",
        preexec_fn=_no_preexec,
    )


def test_the_keeper_starts_a_spare_once_the_worker_has_served_its_delay(tmp_path: Path) -> None:
    keeper = _keeper(tmp_path, delay_s=3600)
    keeper.worker_started(time.monotonic())
    assert keeper.tend(worker_running=True) is False  # not yet due
    assert keeper.pid is None

    keeper = _keeper(tmp_path)
    keeper.worker_started(time.monotonic())
    assert keeper.tend(worker_running=False) is False  # no worker, no spare
    assert keeper.tend(worker_running=True) is True
    assert keeper.pid is not None
    assert keeper.tend(worker_running=True) is False  # one at a time
    spare = keeper.take()
    assert spare is not None and keeper.pid is None
    assert spare.process.wait(30) == 0
    spare.output.close()
    assert (tmp_path / "worker.log").read_text().strip() == "serving"


def test_a_keeper_that_is_off_never_starts_one(tmp_path: Path) -> None:
    keeper = _keeper(tmp_path, enabled=False)
    keeper.worker_started(time.monotonic())
    assert keeper.tend(worker_running=True) is False
    assert keeper.pid is None and keeper.take() is None


def test_a_spare_that_died_is_replaced_and_never_promoted(tmp_path: Path) -> None:
    keeper = _keeper(tmp_path)
    keeper.worker_started(time.monotonic())
    keeper.tend(worker_running=True)
    assert keeper.spare is not None
    dead = keeper.spare.process
    dead.kill()
    dead.wait()
    assert keeper.tend(worker_running=True) is True  # noticed, and the next one is due
    assert keeper.pid is None
    assert keeper.tend(worker_running=True) is True  # delay 0: a new one starts
    assert keeper.pid not in (None, dead.pid)
    assert keeper.spare is not None
    keeper.spare.process.kill()
    keeper.spare.process.wait()
    assert keeper.take() is None  # died before its promotion: the worker starts afresh
    keeper.worker_started(time.monotonic())
    keeper.tend(worker_running=True)
    keeper.retire()
    assert keeper.pid is None and keeper.take() is None


def test_a_spare_that_died_asked_to_hand_over_leaves_the_hand_off_to_the_supervisor(
    tmp_path: Path,
) -> None:
    keeper = _keeper(tmp_path)
    keeper.worker_started(time.monotonic())
    keeper.tend(worker_running=True)
    assert keeper.spare is not None
    # Asked, then dead before the supervisor saw it: the keeper cannot tell whether the spare
    # read the byte (one killed a moment before the worker still looks alive and never does).
    assert keeper.unstick() is True
    keeper.spare.process.kill()
    keeper.spare.process.wait()
    assert keeper.hand_over_lost() is False  # not noticed yet
    assert keeper.tend(worker_running=True) is True
    assert keeper.hand_over_lost() is True
    assert keeper.hand_over_lost() is False  # once per loss

    # Found dead at the restart instead: the same.
    keeper.tend(worker_running=True)
    assert keeper.spare is not None
    keeper.spare.process.kill()
    keeper.spare.process.wait()
    keeper.spare.asked_to_unstick = True
    assert keeper.take() is None and keeper.hand_over_lost() is True

    # A spare that died without being asked leaves nothing undone.
    keeper.worker_started(time.monotonic())
    keeper.tend(worker_running=True)
    assert keeper.spare is not None
    keeper.spare.process.kill()
    keeper.spare.process.wait()
    assert keeper.take() is None and keeper.hand_over_lost() is False
    keeper.retire()
