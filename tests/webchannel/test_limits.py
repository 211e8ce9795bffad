"""Per-token token buckets: a burst, then the sustained rate, each token on its own."""

from __future__ import annotations

import pytest

from webchannel.limits import MessageLimits, retry_after


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_a_burst_then_the_sustained_rate() -> None:
    clock = Clock()
    limits = MessageLimits(per_minute=30, burst=3, clock=clock)
    assert [limits.take("t1") for _ in range(3)] == [None, None, None]
    wait = limits.take("t1")
    assert wait == pytest.approx(2.0)  # one message every 2 s at 30 a minute
    clock.now += 1.0
    assert limits.take("t1") == pytest.approx(1.0)
    clock.now += 1.0
    assert limits.take("t1") is None
    assert limits.take("t1") == pytest.approx(2.0)


def test_tokens_are_limited_apart() -> None:
    limits = MessageLimits(per_minute=60, burst=1, clock=Clock())
    assert limits.take("t1") is None
    assert limits.take("t1") is not None
    assert limits.take("t2") is None


def test_a_quiet_spell_refills_no_more_than_the_burst() -> None:
    clock = Clock()
    limits = MessageLimits(per_minute=60, burst=2, clock=clock)
    limits.take("t1")
    clock.now += 3600
    assert [limits.take("t1") for _ in range(2)] == [None, None]
    assert limits.take("t1") is not None


def test_zero_turns_the_limit_off() -> None:
    limits = MessageLimits(per_minute=0, burst=1, clock=Clock())
    assert all(limits.take("t1") is None for _ in range(1000))


def test_nonsense_settings_are_refused() -> None:
    with pytest.raises(ValueError, match="burst at least 1"):
        MessageLimits(per_minute=10, burst=0)
    with pytest.raises(ValueError, match="per_minute must be 0 or more"):
        MessageLimits(per_minute=-1)


def test_retry_after_is_whole_seconds_and_never_zero() -> None:
    assert retry_after(0.01) == "1"
    assert retry_after(2.0) == "2"
    assert retry_after(2.1) == "3"
