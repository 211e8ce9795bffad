""" "What time is it?" answered from the clock on plans that confirm without the model.

SmolLM2, shown the time in its prompt, answered "It's 20.48:53 UTC" at 14:00. On a plan that
confirms without the model (``confirm_done``), a message that only asks the time or the date is
answered by the platform (``activities.asked_for``) and the model is not asked; on other plans
the model answers, from the clock line in its prompt.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st
from temporalio.client import Client

from activities.context.clock import asks_the_time, friendly_now
from activities.gateway.providers.scripted import ScriptRule
from schemas.models import CallPlan, ProviderName, TaskType
from tests.harness import Stack, running_worker

TINY = {ProviderName.SCRIPTED: CallPlan(offer_tools=False, confirm_done=True)}
RULES = [ScriptRule(task=TaskType.RESPOND.value, match="", reply="It is 20.48:53, right!")]


@pytest.mark.parametrize(
    "said",
    [
        "What time is it?",
        "what's the time",
        "Hey, what time is it now?",
        "What is the date today?",
        "Do you know the time?",
        "Can you tell me what time it is?",
        "what day is it",
        "what is the time please?",
    ],
)
def test_a_question_for_the_time_is_recognised(said: str) -> None:
    assert asks_the_time(said)


@pytest.mark.parametrize(
    "said",
    [
        "What time is it in Tokyo?",
        "What time is the meeting?",
        "what date is the party?",
        "I lost track of time",
        "What time is it? Also, how are you?",
    ],
)
def test_other_questions_about_time_are_left_to_the_model(said: str) -> None:
    assert not asks_the_time(said)


@given(st.text(max_size=300))
def test_any_text_is_read_without_error(text: str) -> None:
    assert asks_the_time(text) in (True, False)


def _moments(start: datetime, end: datetime) -> set[str]:
    """Every answer the clock could have given between ``start`` and ``end``."""
    minute = start.replace(second=0, microsecond=0)
    found = set()
    while minute <= end:
        found.add(friendly_now(minute, "UTC"))
        minute += timedelta(minutes=1)
    return found


async def test_the_platform_answers_the_time_without_the_model(
    client: Client, stack: Stack
) -> None:
    async with running_worker(
        client, stack, rules=RULES, settings_overrides={"call_plans": TINY}
    ) as harness:
        agent = (await harness.create_agent()).handle
        start = datetime.now(UTC)
        asked = await harness.say(agent, "What time is it?")
        end = datetime.now(UTC)
        assert asked.marker is not None
        assert asked.marker.text in _moments(start, end)
        assert not [r for r in harness.provider.requests if r.task is TaskType.RESPOND]

        # Anything else still goes to the model.
        other = await harness.say(agent, "What time is the meeting?")
        assert other.marker is not None and other.marker.text == "It is 20.48:53, right!"


async def test_on_a_plan_that_trusts_the_model_it_answers_the_time(
    client: Client, stack: Stack
) -> None:
    async with running_worker(client, stack, rules=RULES) as harness:
        agent = (await harness.create_agent()).handle
        asked = await harness.say(agent, "What time is it?")
        assert asked.marker is not None and asked.marker.text == "It is 20.48:53, right!"
        prompt = [r for r in harness.provider.requests if r.task is TaskType.RESPOND][-1]
        assert "They asked for the time" not in prompt.system


ASKS = ["What time is it", "what's the time", "What is the date today", "Do you know the time"]


@given(
    st.sampled_from(["", "Hey, ", "ok ", "please "]),
    st.sampled_from(ASKS),
    st.sampled_from(["", "?", "??", ".", " please?"]),
)
def test_every_way_of_only_asking_the_time_is_recognised(lead: str, ask: str, end: str) -> None:
    assert asks_the_time(f"{lead}{ask}{end}")


@given(
    st.sampled_from(ASKS),
    st.text(st.characters(categories=["L"]), min_size=2, max_size=20),
)
def test_a_question_for_the_time_somewhere_else_is_left_to_the_model(ask: str, place: str) -> None:
    assert not asks_the_time(f"{ask} in {place}?")
