"""On a plan too small to critique itself, no recollection with nothing behind it is sent."""

from __future__ import annotations

from temporalio.client import Client

from activities.deliberation.recollection import (
    HONEST,
    RECALLED,
    RECALLED_FAINTLY,
    from_the_record,
    honest,
    unsupported_claim,
)
from activities.gateway.providers.scripted import ScriptRule
from schemas.models import CallPlan, ChatMessage, ProviderName, StagePlan, TaskType
from tests.harness import Stack, running_worker
from tests.memory.formation.helpers import (
    close_and_consolidate,
    formation_rules,
    formation_worker,
    new_agent,
)

FABRICATED = "Of course! I remember your trip to Lisbon, the tiles were beautiful."


def turns(*texts: str) -> list[ChatMessage]:
    return [
        ChatMessage(role="user" if i % 2 == 0 else "assistant", content=t)
        for i, t in enumerate(texts)
    ]


def test_a_claim_built_from_the_current_message_alone_is_unsupported() -> None:
    asked = turns("remember when we talked about my trip to Lisbon?")

    assert honest(FABRICATED, "You are Ada.", asked) == HONEST


def test_a_claim_the_earlier_dialog_or_recalled_memories_hold_passes() -> None:
    earlier = turns("I went to Lisbon in May.", "How lovely!", "remember my trip to Lisbon?")
    recalled = "You are Ada.\n\nMemories:\n- Sam told me about a trip to Lisbon and its tiles."

    assert honest(FABRICATED, "You are Ada.", earlier) == FABRICATED
    assert honest(FABRICATED, recalled, turns("remember my trip?")) == FABRICATED


def test_replies_that_claim_nothing_or_say_they_do_not_remember_pass() -> None:
    record = "You are Ada."
    for reply in (
        "Lisbon sounds wonderful. What did you see there?",
        "I don't remember that trip. Tell me about it?",
        "I do not recall us talking about Lisbon.",
        "I remember!",  # no subject to check: left alone
    ):
        assert unsupported_claim(reply, record) is None, reply


PRESUPPOSED = "I'm so glad you enjoyed the trip to Lisbon! The tiles must have been lovely."


def test_a_reply_presupposing_what_it_was_asked_to_recall_is_checked_by_the_question() -> None:
    # Seen on SmolLM2: no claiming words, the recollection taken for granted.
    never = turns("remember when we talked about my trip to Lisbon?")
    told = turns("I went to Lisbon in May.", "Nice!", "do you remember my trip to Lisbon?")

    assert honest(PRESUPPOSED, "You are Ada.", never) == HONEST
    assert honest(PRESUPPOSED, "You are Ada.", told) == PRESUPPOSED
    for not_a_question in ("remember to call mum tomorrow", "Please remember I prefer tea."):
        reply = "I will."
        assert honest(reply, "You are Ada.", turns(not_a_question)) == reply


def test_an_invented_recollection_once_sent_does_not_vouch_for_the_next() -> None:
    earlier = turns(
        "remember when we talked about my trip to Lisbon?",
        PRESUPPOSED,  # sent before the check existed, or by a larger model's slip
        "remember when we talked about my trip to Lisbon?",
    )

    assert honest(PRESUPPOSED, "You are Ada.", earlier) == HONEST


def test_other_ways_of_claiming_a_recollection_are_checked_too() -> None:
    for reply in (
        "You told me your sister Ines lives in Porto.",
        "Last time we discussed your garden in Sintra.",
        "As we discussed, the budget was approved.",
    ):
        assert unsupported_claim(reply, "You are Ada.") is not None, reply


async def test_the_tiny_plans_reply_says_it_does_not_remember_instead_of_inventing(
    client: Client, stack: Stack
) -> None:
    rules = [ScriptRule(task=TaskType.RESPOND.value, match="Lisbon", reply=FABRICATED)]
    plans = {ProviderName.SCRIPTED: CallPlan(check_recollections=True)}
    async with running_worker(
        client, stack, rules=rules, settings_overrides={"call_plans": plans}
    ) as harness:
        agent = (await harness.create_agent()).handle
        invented = await harness.say(agent, "remember when we talked about my trip to Lisbon?")
        await harness.say(agent, "I went to Lisbon in May and loved the tiles.")
        held = await harness.say(agent, "remember my trip to Lisbon?")

    assert invented.marker is not None and invented.marker.text == HONEST
    assert held.marker is not None and held.marker.text == FABRICATED


BICYCLE = 'I talked with Ada on terminal:tty. Ada said: "I once had a blue bicycle."'
TEA = 'I talked with Ada on terminal:tty. Ada said: "I prefer tea."'


def test_a_request_to_recall_is_answered_by_the_memory_that_holds_it() -> None:
    shown = [(TEA, "strong"), (BICYCLE, "moderate")]
    assert from_the_record("Do you remember my bicycle?", shown) == RECALLED_FAINTLY.format(
        memory=BICYCLE
    )
    assert from_the_record("Remember what I prefer to drink?", shown) == RECALLED.format(memory=TEA)


def test_nothing_answers_a_request_no_memory_holds_or_a_message_that_asks_no_recall() -> None:
    shown = [(TEA, "strong"), (BICYCLE, "moderate")]
    assert from_the_record("Do you remember my trip to Lisbon?", shown) is None
    assert from_the_record("I prefer tea these days.", shown) is None
    assert from_the_record("Do you remember my bicycle?", []) is None


async def test_the_tiny_plans_recollection_is_the_memory_itself(
    client: Client, stack: Stack
) -> None:
    plans = {
        ProviderName.SCRIPTED: CallPlan(
            check_recollections=True,
            stages={
                TaskType.SUMMARIZE: StagePlan(run=False, max_string_chars=400),
                TaskType.RATE: StagePlan(run=False),
            },
        )
    }
    rules = [
        ScriptRule(task=TaskType.RESPOND.value, match="bicycle?", reply=FABRICATED),
        *formation_rules(),
    ]
    async with formation_worker(
        client, stack, rules=rules, settings_overrides={"encoder": "none", "call_plans": plans}
    ) as harness:
        agent = await new_agent(harness.db, idle_minutes=0.02)
        told = await harness.say(agent, "I once had a blue bicycle, long story.")
        assert told.marker is not None and told.marker.conversation_id
        await close_and_consolidate(harness.client, told.marker.conversation_id)
        asked = await harness.say(agent, "Do you remember my bicycle?")
        responds = [r for r in harness.provider.requests if r.task is TaskType.RESPOND]

    assert asked.marker is not None and asked.marker.text is not None
    assert asked.marker.text.startswith(("I remember this: I talked with", "I think I remember"))
    assert '"I once had a blue bicycle, long story."' in asked.marker.text
    assert all("Do you remember my bicycle?" not in r.messages[-1].content for r in responds)
