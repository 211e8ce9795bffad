"""Reading "remind me to ... in 10 minutes" without a model (``activities.scheduling.asked``)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest
from hypothesis import given
from hypothesis import strategies as st

from activities.scheduling.asked import asked_reminder

NOW = datetime(2026, 12, 4, 10, 40, tzinfo=UTC)  # 11:40 in Paris


@pytest.mark.parametrize(
    "said,objective,delay",
    [
        ("remind me to call mum in 10 minutes", "call mum", timedelta(minutes=10)),
        (
            "Please remind me in 2 hours to take the bread out.",
            "take the bread out",
            timedelta(hours=2),
        ),
        ("can you remind me about the dentist in an hour?", "the dentist", timedelta(hours=1)),
        (
            "Set a reminder to water the plants in half an hour",
            "water the plants",
            timedelta(minutes=30),
        ),
        ("remind me in five mins to stretch", "stretch", timedelta(minutes=5)),
        ("ok, remind me that the parcel comes in 3 days", "the parcel comes", timedelta(days=3)),
        (
            "Please remind me in a moment to check the lighthouse paint order.",
            "check the lighthouse paint order",
            timedelta(minutes=1),
        ),
        ("remind me to stretch in a few minutes", "stretch", timedelta(minutes=5)),
        ("remind me in a couple of hours to eat", "eat", timedelta(hours=2)),
    ],
)
def test_a_delay_is_read_with_the_objective_in_the_persons_words(
    said: str, objective: str, delay: timedelta
) -> None:
    asked = asked_reminder(said, now=NOW, timezone="UTC")
    assert asked is not None
    assert (asked.objective, asked.at) == (objective, NOW + delay)


@pytest.mark.parametrize(
    "said,local",
    [
        ("remind me to call Ines at 5pm", datetime(2026, 12, 4, 17, 0)),
        ("remind me at 17:30 to leave", datetime(2026, 12, 4, 17, 30)),
        ("remind me to check the oven at 9", datetime(2026, 12, 5, 9, 0)),  # 9:00 has passed
        ("remind me to run at 7am tomorrow", datetime(2026, 12, 5, 7, 0)),
        ("remind me tomorrow to book the train", datetime(2026, 12, 5, 9, 0)),
        ("remind me to read tonight at 10", datetime(2026, 12, 4, 22, 0)),
    ],
)
def test_a_clock_time_is_read_in_the_agents_zone(said: str, local: datetime) -> None:
    paris = ZoneInfo("Europe/Paris")
    asked = asked_reminder(said, now=NOW, timezone="Europe/Paris")
    assert asked is not None
    assert asked.at == local.replace(tzinfo=paris)


@pytest.mark.parametrize(
    "said",
    [
        "remind me later",
        "remind me what we talked about",
        "remind me of it in 10 minutes",  # of what?
        "do you remember my trip?",
        "I told him to remind me in 10 minutes",  # not a request to the agent
        "remind me to call mum at 25:00",
        "remind me to call mum at 13pm",
        "remind me to call mum in 0 minutes",
        "what time is it?",
        "",
    ],
)
def test_what_it_cannot_read_exactly_is_left_to_the_model(said: str) -> None:
    assert asked_reminder(said, now=NOW, timezone="UTC") is None


@given(st.text(max_size=300))
def test_any_text_is_read_or_refused_without_error(text: str) -> None:
    asked = asked_reminder(text, now=NOW, timezone="Europe/Paris")
    if asked is not None:
        assert asked.at > NOW and asked.objective.strip() == asked.objective != ""


WORDS = st.lists(
    st.sampled_from(["call", "Ines", "the", "plants", "water", "bread", "été", "mañana"]),
    min_size=1,
    max_size=8,
).map(" ".join)


@given(WORDS, st.integers(min_value=1, max_value=9999))
def test_an_objective_is_kept_whole_with_its_delay(objective: str, minutes: int) -> None:
    asked = asked_reminder(
        f"remind me to {objective} in {minutes} minutes", now=NOW, timezone="UTC"
    )
    assert asked is not None
    assert (asked.objective, asked.at) == (objective, NOW + timedelta(minutes=minutes))
