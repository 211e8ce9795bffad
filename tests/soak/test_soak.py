"""A shortened soak: four agents for two minutes while the worker, Temporal and PostgreSQL are
each killed with SIGKILL at least once and restored as an operator would
(``systemtests/soak/report.py``).

It asserts the invariants, never timings: no input lost, no reply twice, no workflow stuck,
culling keeps what was rated important, the deleted heartbeat stays deleted, no table outside
dialog and memory grows with the messages, and the per-message run records are gone when the
purge runs as if their retention window had passed.
"""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from systemtests.soak.run import SoakConfig, run_soak
from systemtests.soak.stack import FaultKind

SHORT = SoakConfig(
    agents=4,
    minutes=2.0,
    fault_gap_s=(15.0, 25.0),
    quiet_end_s=0.0,  # every kind of kill within two minutes; recovery is the full soak's to show
    check_every_s=10.0,
    idle_minutes=0.25,
    session_pause_s=(18.0, 30.0),
    grace_s=120.0,
)


@pytest.fixture
def home() -> Iterator[Path]:
    with tempfile.TemporaryDirectory(prefix="persyn-soak-") as path:
        Path(path).chmod(0o755)  # the embedded PostgreSQL runs as another user
        yield Path(path)


@pytest.mark.timeout(480)
async def test_a_short_soak_with_every_kind_of_kill_keeps_the_invariants(home: Path) -> None:
    report = await run_soak(SHORT, home)

    assert {f.kind for f in report.faults} == set(FaultKind), report.faults
    assert all(f.error is None for f in report.faults), report.faults
    assert len(report.sent) >= 20
    assert report.violations == []
    # Every message was answered, each exactly once, and the probe kept measuring throughout.
    assert all(s.done is not None for s in report.sent)
    assert report.redone_events == 0
    assert any(s.probe for s in report.sent)
    assert report.samples.longest_history() > 0
    assert report.samples.tables, "no sample of the table sizes was taken"
    # The run records grew with the messages, and the purge a month later left none of them.
    later = report.month_later
    assert later is not None and later.before.get("activations", 0) >= len(report.sent) // 2
    assert later.survivors == {}
