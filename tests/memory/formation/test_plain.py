"""Formation without a model: the plain record and the fixed rubric (``formation.plain``).

On a plan that does not run SUMMARIZE and RATE (the tiny model's), a closed conversation still
becomes a first-person memory that keeps what people said, rated by what was said, and the
model is asked neither to summarise nor to rate.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from hypothesis import given
from hypothesis import strategies as st
from temporalio.client import Client

from activities.gateway.providers.scripted import ScriptedProvider, ScriptRule
from activities.memory.explicit import ASKED_IMPORTANCE
from activities.memory.formation.plain import (
    DECISION,
    DISCLOSURE,
    INTRODUCTION,
    SMALL_TALK,
    plain_rating,
    plain_summary,
)
from schemas.memory import MemoryRecordPublic
from schemas.models import CallPlan, ProviderName, StagePlan, TaskType
from store.queries.memory_formation import RangeTurn
from tests.harness import Stack
from tests.memory.formation.helpers import (
    CLASSIFY_SYSTEM,
    close_and_consolidate,
    formation_requests,
    formation_rules,
    formation_worker,
    new_agent,
    records_of,
    row,
)

AT = datetime(2026, 12, 4, 9, tzinfo=UTC)


def turns(*said: tuple[str, str]) -> list[RangeTurn]:
    """Turns from (speaker, text); the speaker "Wren" is the agent."""
    return [
        RangeTurn(
            id=f"t{i}",
            role="agent" if who == "Wren" else "person",
            speaker_name=who,
            person_id=None if who == "Wren" else f"p-{who}",
            text=text,
            at=AT + timedelta(minutes=i),
        )
        for i, (who, text) in enumerate(said)
    ]


def test_the_record_keeps_what_people_said_in_the_first_person() -> None:
    summary = plain_summary(
        turns(
            ("Ada", "Hello! I'm Ada. I'm restoring the old lighthouse on the point."),
            ("Wren", "It means a lot to you, I can tell."),
        ),
        channel="terminal:kitchen",
        max_chars=500,
    )
    assert summary == (
        "I met Ada for the first time, on terminal:kitchen. Ada said: \"Hello! I'm Ada. I'm "
        'restoring the old lighthouse on the point." I said: "It means a lot to you, I can '
        'tell."'
    )


def test_a_long_stretch_keeps_people_first_and_fits_its_length() -> None:
    said = [("Bo", f"Fact number {i}: the tide turns at {i} o'clock.") for i in range(30)]
    stretch = turns(("Wren", "Hello both."), *said)
    summary = plain_summary(stretch, channel="web:office", max_chars=300)
    assert len(summary) <= 300
    assert summary.startswith('I talked with Bo on web:office. Bo said: "Fact number 0:')
    assert '"Fact number 3:' in summary and '"Fact number 29:' not in summary
    assert "I said" not in summary  # the agent's own words give way first
    roomy = plain_summary(stretch[:3], channel="web:office", max_chars=300)
    assert roomy.startswith('I talked with Bo on web:office. I said: "Hello both." Bo said:')


def test_the_rubric_rates_by_what_was_said() -> None:
    assert plain_rating(turns(("Ada", "Please remember that I prefer tea.")))[0] == (
        ASKED_IMPORTANCE
    )
    assert plain_rating(turns(("Ada", "Hi, I'm Ada.")))[0] == INTRODUCTION
    assert plain_rating(turns(("Ada", "Let's finish the budget today.")))[0] == DECISION
    assert plain_rating(turns(("Ada", "I once had a blue bicycle.")))[0] == DISCLOSURE
    assert plain_rating(turns(("Ada", "Rainy again today.")))[0] == SMALL_TALK
    felt, rubric = plain_rating(turns(("Ada", "I am so worried about the exam.")))
    assert felt == DISCLOSURE + 1 and rubric["reason"] == (
        "they told me something of their own; a feeling named"
    )
    assert rubric["rated_by"] == "rubric"


@given(st.lists(st.tuples(st.sampled_from(["Ada", "Wren"]), st.text(max_size=400)), max_size=12))
def test_any_stretch_gets_a_bounded_record_and_a_rating(said: list[tuple[str, str]]) -> None:
    stretch = turns(*said)
    summary = plain_summary(stretch, channel="chat:general", max_chars=500)
    assert len(summary) <= 500 and summary.startswith("I ")
    importance, _ = plain_rating(stretch)
    assert 1 <= importance <= 10


PLAIN = {
    ProviderName.SCRIPTED: CallPlan(
        stages={
            TaskType.SUMMARIZE: StagePlan(run=False, max_string_chars=400),
            TaskType.RATE: StagePlan(run=False),
        }
    )
}


async def formed_plainly(
    client: Client, stack: Stack, said: str, rules: list[ScriptRule]
) -> tuple[MemoryRecordPublic, ScriptedProvider]:
    """The one memory a closed conversation of ``said`` forms on the plain plan."""
    async with formation_worker(
        client, stack, rules=rules, settings_overrides={"encoder": "none", "call_plans": PLAIN}
    ) as harness:
        agent = await new_agent(harness.db, idle_minutes=0.02)
        receipt = await harness.say(agent, said)
        assert receipt.marker and receipt.marker.conversation_id
        (result,) = await close_and_consolidate(harness.client, receipt.marker.conversation_id)
        assert len(result.formed) == 1 and not result.failed
        (record,) = await records_of(harness.db, agent)
        kept = await row(harness.db, "SELECT rubric FROM memory_records WHERE id = :r", r=record.id)
        assert kept.rubric["rated_by"] == "rubric"
        return record, harness.provider


async def test_a_plan_too_small_to_judge_forms_the_plain_record_without_the_model(
    client: Client, stack: Stack
) -> None:
    record, model = await formed_plainly(
        client, stack, "Hi, I'm Ada. I'm allergic to peanuts.", formation_rules(importance=1)
    )
    assert record.summary.startswith("I met ")
    assert "I'm allergic to peanuts." in record.summary
    assert record.importance == INTRODUCTION + 1  # introduced, and named a feeling
    assert not formation_requests(model, "summarize")
    assert not formation_requests(model, "rate")
    assert formation_requests(model, "classify")  # the model still tags it


async def test_a_classification_the_model_cannot_give_does_not_lose_the_memory(
    client: Client, stack: Stack
) -> None:
    unreadable = ScriptRule(task="classify", system_match=CLASSIFY_SYSTEM, reply="Happy, I think!")
    record, model = await formed_plainly(
        client, stack, "Let's finish the quarterly plan today.", [unreadable, *formation_rules()]
    )
    assert record.importance == DECISION and "quarterly plan" in record.summary
    assert record.emotion == "neutral" and record.sensitivity == "private" and not record.tags
    assert len(formation_requests(model, "classify")) == 2  # tried once more


async def test_a_plan_that_does_not_judge_sensitivity_keeps_the_memory_private(
    client: Client, stack: Stack
) -> None:
    # The tiny model's labels were noise (7 of 30 memories of garden talk "restricted"): on its
    # plan the memory is private whatever the classifier says; the channel's floor still holds.
    unjudged = {
        ProviderName.SCRIPTED: PLAIN[ProviderName.SCRIPTED].model_copy(
            update={"judge_sensitivity": False}
        )
    }
    for label in ("restricted", "public"):
        async with formation_worker(
            client,
            stack,
            rules=formation_rules(sensitivity=label),
            settings_overrides={"encoder": "none", "call_plans": unjudged},
        ) as harness:
            agent = await new_agent(harness.db, idle_minutes=0.02)
            receipt = await harness.say(agent, "We planted the beans by the shed today.")
            assert receipt.marker and receipt.marker.conversation_id
            await close_and_consolidate(harness.client, receipt.marker.conversation_id)
            (record,) = await records_of(harness.db, agent)
        assert record.sensitivity == "private", label
    # A plan that judges takes the classifier's word.
    judged, _ = await formed_plainly(
        client, stack, "We planted the beans.", formation_rules(sensitivity="restricted")
    )
    assert judged.sensitivity == "restricted"
