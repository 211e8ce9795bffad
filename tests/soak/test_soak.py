"""A shortened soak: four agents for two minutes while the worker, Temporal and PostgreSQL are
each killed with SIGKILL at least once and restored as an operator would (``bench/soak.py``).

It asserts the invariants, never timings: no input lost, no reply twice, no workflow stuck,
culling keeps what was rated important, the deleted heartbeat stays deleted, no table outside
dialog and memory grows with the messages (beyond the known ones named below).
"""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from bench.soak_run import SoakConfig, SoakReport, run_soak
from bench.soak_stack import FaultKind

KNOWN_UNBOUNDED = frozenset(
    {"activations", "drafts", "outbox", "prompts", "speak_decisions", "usage_records"}
)
"""Per-activation records the maintenance purge bounds only past ``run_record_retention_days``
(days, longer than a soak): within one they grow one row per message (docs/operations.md).
A table that starts growing and is not named here fails the test."""

SHORT = SoakConfig(
    agents=4,
    minutes=2.0,
    fault_gap_s=(15.0, 25.0),
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


def unexpected(report: SoakReport) -> list[str]:
    """Violations other than growth of the tables known to grow."""
    known = {f"table {t} " for t in KNOWN_UNBOUNDED}
    return [v for v in report.violations if not any(v.startswith(k) for k in known)]


@pytest.mark.timeout(480)
async def test_a_short_soak_with_every_kind_of_kill_keeps_the_invariants(home: Path) -> None:
    report = await run_soak(SHORT, home)

    assert {f.kind for f in report.faults} == set(FaultKind), report.faults
    assert all(f.error is None for f in report.faults), report.faults
    assert len(report.sent) >= 20
    assert unexpected(report) == []
    # Every message was answered, each exactly once, and the probe kept measuring throughout.
    assert all(s.done is not None for s in report.sent)
    assert report.redone_events == 0
    assert any(s.probe for s in report.sent)
    assert report.samples.longest_history() > 0
    assert report.samples.tables, "no sample of the table sizes was taken"
