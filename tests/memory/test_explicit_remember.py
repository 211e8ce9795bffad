"""A person's "please remember ..." is kept at once, and reaches the reply that answers it."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from hypothesis import given
from hypothesis import strategies as st
from temporalio.client import Client

from activities.gateway.providers.scripted import ScriptRule
from activities.memory.about_me import NOTHING_YET
from activities.memory.explicit import _POINTERS, fact_key, requested_fact
from schemas.ids import new_ulid
from schemas.models import CallPlan, ProviderName, TaskType
from store.queries.goals import get_facts
from store.queries.memory import NewRecord, insert_record
from store.sql import execute
from tests.harness import Harness, Stack, running_worker, terminal


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


@given(
    st.sampled_from(["please remember", "remember", "don't forget", "note"]),
    st.lists(st.sampled_from(sorted(_POINTERS)), min_size=1, max_size=6).map(" ".join),
    st.sampled_from(["", ".", "!", " ok"]),
)
def test_a_request_made_only_of_words_pointing_elsewhere_keeps_nothing(
    ask: str, pointing: str, end: str
) -> None:
    assert requested_fact(f"{ask} {pointing}{end}") is None


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
    # The key's digest keeps two requests apart; SmolLM2 copied it into replies ("(130c8)").
    assert "asked you to remember = I prefer tea" in replies[-1].system
    assert fact_key("I prefer tea") not in replies[-1].system

    await harness.say(agent, "remember when we talked about my trip to Lisbon?")
    await harness.say(agent, "what do you know about me?")

    async with harness.db.session() as session:
        assert len(await get_facts(session, agent=agent)) == 1  # the question kept nothing
    replies = [r for r in harness.provider.requests if r.task is TaskType.RESPOND]
    assert "I prefer tea" in replies[-1].system


async def test_on_a_plan_that_confirms_without_the_model_the_reply_says_what_it_knows(
    client: Client, stack: Stack
) -> None:
    plans = {
        ProviderName.SCRIPTED: CallPlan(
            offer_tools=False, confirm_done=True, check_recollections=True
        )
    }
    rules = [
        ScriptRule(task=TaskType.RESPOND.value, match="tea", reply="Lovely!"),
        # What the tiny model said: a recollection the recollection check refused, while
        # the platform's answer beside it quoted what it does know.
        ScriptRule(
            task=TaskType.RESPOND.value,
            match="know about me",
            reply="I remember you sailed to Lisbon with Pedro.",
        ),
    ]
    async with running_worker(
        client, stack, rules=rules, settings_overrides={"call_plans": plans}
    ) as harness:
        agent = (await harness.create_agent()).handle
        nothing = await harness.say(agent, "what do you know about me?")
        asked = await harness.say(agent, "Please remember that I prefer tea.")
        again = await harness.say(agent, "I like tea in the morning.")
        known = await harness.say(agent, "So what do you know about me?")

    assert asked.marker is not None and asked.marker.text == (
        'Lovely!\n\nNoted: you asked me to remember "I prefer tea".'
    )
    assert again.marker is not None and again.marker.text == "Lovely!"  # nothing asked: as said
    # The model is not asked: the platform's answer is the whole reply, never contradicted.
    assert nothing.marker is not None and nothing.marker.text == NOTHING_YET
    assert known.marker is not None and known.marker.text == (
        'What I have noted about you: you asked me to remember "I prefer tea".'
    )


async def test_what_i_know_quotes_memories_of_the_person_on_that_channel_only(
    client: Client, stack: Stack
) -> None:
    # Told where they live and what they do, never asked to keep it: it is in the memories.
    # The answer says "I remember": the recollection check leaves the platform's words alone.
    plans = {
        ProviderName.SCRIPTED: CallPlan(
            offer_tools=False, confirm_done=True, check_recollections=True
        )
    }
    async with running_worker(client, stack, settings_overrides={"call_plans": plans}) as harness:
        agent = (await harness.create_agent()).handle
        await harness.say(agent, "I live in Lyon.")
        await harness.say(agent, "I sail on weekends.", channel=terminal("elsewhere"))
        said = {"tty": "Ada said: I live in Lyon.", "elsewhere": "Ada said: I sail."}
        async with harness.db.session() as session:
            turns = (
                await execute(
                    session,
                    "SELECT t.person_id, t.channel_id, c.key FROM dialog_turns t "
                    "JOIN channels c ON c.id = t.channel_id "
                    "WHERE t.agent = :a AND t.role = 'person'",
                    {"a": agent},
                )
            ).all()
            for turn in turns:
                await insert_record(
                    session,
                    record=NewRecord(
                        id=new_ulid(),
                        agent=agent,
                        channel_id=turn.channel_id,
                        conversation_id=None,
                        summary=f"I talked with Ada on {turn.key}. {said[turn.key.split(':')[1]]}",
                        importance=5,
                        created_at=datetime.now(UTC),
                        participants=[turn.person_id],
                    ),
                )
            await session.commit()
        known = await harness.say(agent, "what do you know about me?")

    assert known.marker is not None and known.marker.text == (
        "I have nothing noted about you yet. From our conversations I remember: "
        "I talked with Ada on terminal:tty. Ada said: I live in Lyon."
    )
    assert "sail" not in known.marker.text  # said on another channel: it stays there
