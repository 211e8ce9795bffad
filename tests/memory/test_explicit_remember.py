"""A person's "please remember ..." is kept at once, and reaches the reply that answers it."""

from __future__ import annotations

import pytest

from activities.memory.explicit import fact_key, requested_fact
from schemas.models import TaskType
from store.queries.goals import get_facts
from tests.harness import Harness


@pytest.mark.parametrize(
    "said,kept",
    [
        ("please remember I prefer tea", "I prefer tea"),
        ("Please remember that my sister's name is Ines.", "My sister's name is Ines"),
        ("Don't forget: the meeting moved to Friday", "The meeting moved to Friday"),
        ("ok, remember I'm allergic to peanuts!", "I'm allergic to peanuts"),
        ("Hi! Please remember that I prefer tea.", "I prefer tea"),
    ],
)
def test_a_request_to_remember_is_read_in_the_persons_words(said: str, kept: str) -> None:
    assert requested_fact(said) == kept


@pytest.mark.parametrize(
    "said",
    [
        "remember when we talked about my trip to Lisbon?",
        "remember when we talked about my trip to Lisbon",
        "do you remember my name",
        "I remember the old house",
        "I can't remember where I put my keys",
        "Remember me?",
        "what do you know about me?",
        "remember to call mum tomorrow",  # a reminder, not a fact
        "Remember, we agreed on blue",  # a claim about the past, for memory to judge
        "Please remember these.",  # points at something said elsewhere
        "note all of that for me",
        "Don't forget this, ok",
    ],
)
def test_questions_recollections_and_plans_are_not_requests_to_remember(said: str) -> None:
    assert requested_fact(said) is None


def test_the_same_request_made_twice_is_one_fact() -> None:
    assert fact_key("I prefer tea") == fact_key("i prefer  tea.")
    assert fact_key("I prefer tea") != fact_key("I prefer coffee")


async def test_a_kept_request_is_in_the_prompt_of_its_own_reply_and_of_later_ones(
    harness: Harness,
) -> None:
    agent = (await harness.create_agent()).handle
    asked = await harness.say(agent, "Please remember that I prefer tea.")
    assert asked.marker is not None
    async with harness.db.session() as session:
        facts = await get_facts(session, agent=agent)
    assert [(f.key, f.value) for f in facts] == [(fact_key("I prefer tea"), "I prefer tea")]
    replies = [r for r in harness.provider.requests if r.task is TaskType.RESPOND]
    assert "I prefer tea" in replies[-1].system  # the reply that answers the request

    await harness.say(agent, "remember when we talked about my trip to Lisbon?")
    await harness.say(agent, "what do you know about me?")

    async with harness.db.session() as session:
        assert len(await get_facts(session, agent=agent)) == 1  # the question kept nothing
    replies = [r for r in harness.provider.requests if r.task is TaskType.RESPOND]
    assert "I prefer tea" in replies[-1].system
