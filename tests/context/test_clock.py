"""The date/time line: the right local time, in words a small model can repeat."""

from __future__ import annotations

from datetime import UTC, datetime

from activities.context.clock import friendly_now, part_of_day

HALF_PAST_EIGHT_UTC = datetime(2026, 12, 1, 8, 30, tzinfo=UTC)


def test_half_past_eight_utc_is_morning_not_midnight() -> None:
    # The agent once answered "12:30 AM" at this moment; the prompt itself must not say so.
    line = friendly_now(HALF_PAST_EIGHT_UTC)

    assert line == "It is Tuesday, 1 December 2026, 8:30 in the morning (UTC)."


def test_the_agents_zone_sets_the_hour_and_the_part_of_day() -> None:
    assert friendly_now(HALF_PAST_EIGHT_UTC, "America/Los_Angeles") == (
        "It is Tuesday, 1 December 2026, 12:30 at night (America/Los_Angeles)."
    )
    assert friendly_now(HALF_PAST_EIGHT_UTC, "Asia/Tokyo") == (
        "It is Tuesday, 1 December 2026, 5:30 in the evening (Asia/Tokyo)."
    )


def test_summer_time_is_applied() -> None:
    july = datetime(2026, 7, 1, 8, 30, tzinfo=UTC)

    assert "9:30 in the morning (Europe/London)" in friendly_now(july, "Europe/London")


def test_an_unknown_zone_falls_back_to_utc_and_says_so() -> None:
    assert friendly_now(HALF_PAST_EIGHT_UTC, "Mars/Olympus") == friendly_now(HALF_PAST_EIGHT_UTC)


def test_parts_of_day() -> None:
    assert [part_of_day(h) for h in (4, 5, 11, 12, 16, 17, 20, 21, 0)] == [
        "night",
        "morning",
        "morning",
        "afternoon",
        "afternoon",
        "evening",
        "evening",
        "night",
        "night",
    ]
