"""'What do you know about me?' answered from the quick facts (``activities.memory.about_me``)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from hypothesis import given
from hypothesis import strategies as st

from activities.memory.about_me import MEMORY_CHARS, NOTHING_YET, asks_what_i_know, what_i_know
from activities.memory.explicit import fact_key
from schemas.autonomy import QuickFact

AT = datetime(2026, 12, 4, tzinfo=UTC)
SUBJECT = "01JD3MB1C2D3E4F5G6H7J8K9M0"


def fact(key: str, value: str) -> QuickFact:
    return QuickFact(subject=SUBJECT, key=key, value=value, updated_at=AT)


@pytest.mark.parametrize(
    "said",
    [
        "what do you know about me?",
        "So, what do you remember about me",
        "Tell me what you know about me.",
        "what have you learned about me so far?",
    ],
)
def test_the_question_is_recognised(said: str) -> None:
    assert asks_what_i_know(said)


@pytest.mark.parametrize(
    "said",
    ["what do you know about Lisbon?", "do you know me?", "I know about me", "what about me?"],
)
def test_other_questions_are_left_to_the_model(said: str) -> None:
    assert not asks_what_i_know(said)


def test_kept_requests_read_in_the_persons_words_and_other_facts_as_key_and_value() -> None:
    facts = [fact(fact_key("I prefer tea"), "I prefer tea"), fact("birthday", "12 March")]
    assert what_i_know(facts) == (
        'What I have noted about you: you asked me to remember "I prefer tea"; birthday: 12 March.'
    )
    assert what_i_know([]) == NOTHING_YET


def test_a_long_list_is_cut_and_says_how_many_more() -> None:
    facts = [fact(f"k{i:02}", "v") for i in range(15)]
    answer = what_i_know(facts, most=12)
    assert answer.count(": v") == 12 and answer.endswith("; and 3 more.")


@given(st.text(max_size=400))
def test_any_text_is_read_without_error(text: str) -> None:
    assert asks_what_i_know(text) in (True, False)


def test_memories_are_quoted_after_the_notes_each_cut_at_a_word() -> None:
    long = "I talked with Max on terminal:console. Max said: " + "bread and boats " * 30
    answer = what_i_know([fact("city", "Lyon")], [long, "I met Max for the first time."])

    assert answer.startswith("What I have noted about you: city: Lyon. From our conversations")
    first = answer.split("I remember: ", 1)[1].split(" ... ")[0]
    assert len(first) <= MEMORY_CHARS and first.endswith(("bread", "and", "boats"))
    assert answer.endswith("I met Max for the first time.")


def test_memories_alone_say_that_nothing_is_noted() -> None:
    assert what_i_know([], ["I met Max for the first time."]) == (
        "I have nothing noted about you yet. From our conversations I remember: "
        "I met Max for the first time."
    )
