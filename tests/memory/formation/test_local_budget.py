"""On the local plan, formation prompts stay small, loops leave the summary, tags are topics.

Measured on the default stack: summarize, rate and classify each read ~5,000 tokens on the one
local model server and held replies behind them; a summary came back as one sentence eight
times; a tag copied a fence label. These pin the three fixes on the pure parts.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from activities.context.fencing import DIALOG, FORMED, OWN_WORDS
from activities.gateway.gateway import ModelGateway
from activities.gateway.plans import local_plan
from activities.gateway.providers.scripted import Script, ScriptedProvider, ScriptRule
from activities.gateway.registry import ModelRegistry
from activities.memory.formation import calls, prompts
from schemas.memory_formation import SummaryReply
from schemas.models import CallPlan, ModelBinding, ModelRequest, ProviderName, TaskType
from store.queries.memory_formation import RangeTurn

VOICE = prompts.Voice(name="Ava", persona="A curious companion.", timezone="UTC", channel="cli")
START = datetime(2026, 12, 1, 9, 0, tzinfo=UTC)
LOOP = "I remember it as a recollection of what I experienced. " * 8


def turns(count: int, words: int = 40) -> list[RangeTurn]:
    """``count`` turns of ``words`` words each, alternating a person and the agent."""
    return [
        RangeTurn(
            id=f"t{i:03d}",
            role="agent" if i % 2 else "person",
            speaker_name="Ava" if i % 2 else "Sam",
            person_id=None if i % 2 else "p1",
            text=f"turn {i:03d} " + "tide pools hold anemones and crabs " * (words // 6),
            at=START + timedelta(minutes=i),
        )
        for i in range(count)
    ]


def prompt_chars(request: ModelRequest) -> int:
    return len(request.system) + sum(len(m.content) for m in request.messages)


def gateway_with(plan: CallPlan, reply: str) -> tuple[ModelGateway, ScriptedProvider]:
    provider = ScriptedProvider(Script(rules=[ScriptRule(reply=reply)]))
    binding = ModelBinding(provider=ProviderName.SCRIPTED, model="small", context_window=8192)
    registry = ModelRegistry(
        bindings=dict.fromkeys(TaskType, binding), plans={ProviderName.SCRIPTED: plan}
    )
    return ModelGateway(registry, {ProviderName.SCRIPTED: provider}), provider


def test_the_local_plan_budgets_the_dialog_each_formation_call_reads() -> None:
    plan = local_plan()
    assert plan.stage(TaskType.SUMMARIZE).max_transcript_tokens == 1200
    assert plan.stage(TaskType.RATE).max_transcript_tokens == 0
    assert plan.stage(TaskType.CLASSIFY).max_transcript_tokens == 0
    # Hosted providers read the whole range, as before.
    assert CallPlan().stage(TaskType.SUMMARIZE).max_transcript_tokens is None


def test_a_long_range_is_cut_to_the_budget_keeping_the_latest_turns_whole() -> None:
    dialog = turns(60)  # ~20,000 characters: the ~5,000-token prompt that was measured
    whole = prompts.summary_request(VOICE, dialog, [])
    budgeted = prompts.summary_request(VOICE, dialog, [], transcript_tokens=1200)
    text = budgeted.messages[-1].content

    assert prompt_chars(whole) > 4 * 4000
    # The transcript fits 1,200 tokens; the instructions around it are a few hundred more.
    assert prompt_chars(budgeted) <= 4 * (1200 + 600)
    assert "[...]" in text and "turn 059" in text and "turn 000" not in text
    # Whole turns only: every fence that opens closes.
    assert text.count("<material ") == text.count("</material>")
    assert text.count(DIALOG.opening()) + text.count(OWN_WORDS.opening()) >= 2


def test_rate_and_classify_on_a_zero_budget_judge_the_summary_alone() -> None:
    dialog = turns(60)
    for build in (prompts.rating_request, prompts.classification_request):
        request = build(
            VOICE, "I talked with Sam about tide pools.", dialog, [], transcript_tokens=0
        )
        body = request.messages[-1].content
        assert FORMED.opening() in body and "tide pools." in body
        assert prompts.NOT_QUOTED in body
        assert DIALOG.opening() not in body and "turn 059" not in body
        assert prompt_chars(request) < 4 * 800
        # Without a budget the dialog is quoted, as hosted models get it.
        assert "turn 059" in build(VOICE, "I talked.", dialog, []).messages[-1].content


def test_a_summary_budget_of_zero_still_quotes_the_dialog() -> None:
    request = prompts.summary_request(VOICE, turns(2), [], transcript_tokens=0)
    assert "turn 001" in request.messages[-1].content


async def test_a_looping_summary_is_cut_to_its_first_sentence_on_the_local_plan() -> None:
    gateway, _ = gateway_with(local_plan(), f'{{"summary": "{LOOP}"}}')
    request = prompts.summary_request(VOICE, turns(2), [], transcript_tokens=1200)

    reply = await calls.complete_json(gateway, request, SummaryReply)

    assert reply.summary == "I remember it as a recollection of what I experienced."


async def test_a_hosted_plan_keeps_the_summary_as_written() -> None:
    gateway, _ = gateway_with(CallPlan(), f'{{"summary": "{LOOP}"}}')
    request = prompts.summary_request(VOICE, turns(2), [])

    reply = await calls.complete_json(gateway, request, SummaryReply)

    assert reply.summary == LOOP


def test_tags_copied_from_the_prompts_wording_are_dropped() -> None:
    tags = [
        "your own words: they may quote,",  # FORMED's trust label, as SmolLM2 copied it
        "Tide Pools",
        "never an instruction",
        "short topic tags",  # the classify instructions' own words
        "your own words: they may quo",  # cut short by the string limit
        "memory",  # one word may be a real topic even if the prompt says it
        "marine life",
    ]
    assert calls.clean_tags(tags) == ["tide pools", "memory", "marine life"]
