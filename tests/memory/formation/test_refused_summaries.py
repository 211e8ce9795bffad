"""Formation output that is not a recollection is refused, never stored (``formation.checks``)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from temporalio.client import Client

from activities.gateway.providers.scripted import ScriptRule
from activities.memory.formation.checks import copies_prompt, refusal, takes_their_facts
from activities.prompts import load
from store.queries.memory_formation import RangeTurn
from tests.harness import Stack
from tests.memory.formation.helpers import (
    close_and_consolidate,
    formation_requests,
    formation_rules,
    formation_worker,
    new_agent,
    records_of,
)

AT = datetime(2026, 12, 4, tzinfo=UTC)
ECHO = (
    "We are ready to form a long-term memory. Here is the conversation to remember, on the "
    "channel named here."
)


def turn(role: str, text: str, name: str = "Sam") -> RangeTurn:
    return RangeTurn(
        id="01JD3MB1C2D3E4F5G6H7J8K9M0",
        role=role,
        speaker_name=name if role == "person" else "Ada",
        person_id="01JD3MB1C2D3E4F5G6H7J8K9M1" if role == "person" else None,
        text=text,
        at=AT,
    )


THANKS = ScriptRule(task="respond", match="allergic", reply="Thanks for telling me!")
ALLERGY = [turn("person", "I am allergic to peanuts."), turn("agent", "Thanks for telling me!")]


def test_a_summary_that_repeats_its_instructions_is_a_copy() -> None:
    assert copies_prompt(ECHO, [load("memory/recollection.md")]) is not None
    assert refusal(ECHO, ALLERGY) is not None


@pytest.mark.parametrize(
    "summary",
    [
        "I remember that I was allergic to peanuts.",
        "Sam said hello. I am allergic to peanuts, I recall.",
    ],
)
def test_a_persons_own_facts_told_as_mine_are_refused(summary: str) -> None:
    assert takes_their_facts(summary, ALLERGY) is not None


@pytest.mark.parametrize(
    "summary",
    [
        "Sam told me that they are allergic to peanuts; I promised to remember it.",
        "I learned that Sam is allergic to peanuts.",
        "I thanked them for telling me about their allergy.",
        "I assumed, without confirming, that the allergy was serious.",
        "I was glad to talk.",
    ],
)
def test_recollections_in_my_own_voice_pass(summary: str) -> None:
    assert refusal(summary, ALLERGY) is None


def test_what_i_said_of_myself_too_stays_mine() -> None:
    both = [*ALLERGY, turn("agent", "I am allergic to peanuts as well.")]
    assert takes_their_facts("I am allergic to peanuts as well.", both) is None


@pytest.mark.parametrize("summary", [ECHO, "I remember that I was allergic to peanuts."])
async def test_a_refused_summary_is_tried_again_then_left_with_its_dialog_and_stores_nothing(
    client: Client, stack: Stack, summary: str
) -> None:
    async with formation_worker(
        client,
        stack,
        rules=[THANKS, *formation_rules({"peanuts": summary})],
        settings_overrides={"encoder": "none"},
    ) as harness:
        agent = await new_agent(harness.db, idle_minutes=0.02)
        receipt = await harness.say(agent, "I am allergic to peanuts.")
        assert receipt.marker and receipt.marker.conversation_id
        (result,) = await close_and_consolidate(harness.client, receipt.marker.conversation_id)
        assert result.formed == [] and len(result.failed) == 1
        assert len(formation_requests(harness.provider, "summarize")) == 2  # tried once more
        assert await records_of(harness.db, agent) == []
