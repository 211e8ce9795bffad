"""The soak's worker-memory invariant: flat across restarts, and no runaway within a worker."""

from __future__ import annotations

from systemtests.soak.checks import Samples

MIB = 1024


def _lifetime(level_mib: int, end_mib: int | None = None) -> list[int]:
    """Ten samples (KiB): warm-up below ``level_mib``, then level, ending at ``end_mib``."""
    end = level_mib if end_mib is None else end_mib
    return [300 * MIB, level_mib * MIB, *[level_mib * MIB] * 7, end * MIB]


def test_flat_workers_keep_the_invariant() -> None:
    samples = Samples(rss={pid: _lifetime(400 + pid % 3 * 10) for pid in range(1, 10)})
    assert samples.rss_violations() == []


def test_one_worker_ending_higher_is_not_a_trend() -> None:
    ends = [400, 410, 405, 400, 545, 410, 405, 400, 415]
    samples = Samples(rss={pid: _lifetime(400, end) for pid, end in enumerate(ends, start=1)})
    assert samples.rss_violations() == []


def test_lifetimes_ending_ever_higher_are_growth_across_restarts() -> None:
    ends = [400, 410, 420, 480, 500, 520, 560, 580, 600]
    samples = Samples(rss={pid: _lifetime(400, end) for pid, end in enumerate(ends, start=1)})
    assert samples.rss_violations() == [
        "worker RSS grows across restarts: early lifetimes ended at 410 MiB, late ones at 580 MiB"
    ]


def test_a_runaway_worker_crosses_the_ceiling() -> None:
    samples = Samples(rss={1: _lifetime(400), 2: _lifetime(400, 900), 3: _lifetime(410)})
    assert samples.rss_violations() == [
        "worker RSS reached 900 MiB, over 2x the median worker's 400 MiB after warm-up"
    ]


def test_a_first_worker_still_loading_at_warm_up_does_not_lower_the_ceiling() -> None:
    # The local-model soak's first worker read 224 MiB after warm-up, then settled at 409;
    # against twice that first reading, a later worker at 470 MiB would look like a runaway.
    samples = Samples(rss={1: _lifetime(224, 409), 2: _lifetime(375, 470), 3: _lifetime(380)})
    assert samples.rss_violations() == []


def test_too_few_samples_judge_nothing() -> None:
    assert Samples(rss={1: [400 * MIB, 2000 * MIB]}).rss_violations() == []
