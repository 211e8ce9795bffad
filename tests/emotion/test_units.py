"""The classifier's answer is read strictly, and the state decays back without a timer."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from pydantic import ValidationError

from activities.emotion.classifier import EMOTION_SCHEMA, EmotionReplyError, parse_distribution
from activities.emotion.state import decayed, declining_emotion
from activities.gateway.plans import local_plan, shaped
from schemas.emotion import EmotionReadingPublic, EmotionSettings
from schemas.ids import new_ulid
from schemas.memory import Emotion
from schemas.models import ChatMessage, ModelRequest, TaskType

T0 = datetime(2026, 12, 1, 9, 0, tzinfo=UTC)
SETTINGS = EmotionSettings(half_life_minutes=60)


def reading(distribution: dict[Emotion, float], at: datetime = T0) -> EmotionReadingPublic:
    top = max(distribution, key=lambda e: distribution[e])
    return EmotionReadingPublic(
        id=new_ulid(),
        agent="ada",
        conversation_id=new_ulid(),
        channel_key="terminal:tty",
        activation_id=new_ulid(),
        at=at,
        top=top,
        probability=distribution[top],
        distribution={e: distribution.get(e, 0.0) for e in Emotion},
    )


def test_a_distribution_is_normalised() -> None:
    got = parse_distribution('{"emotions": {"frustrated": 0.6, "neutral": 0.2}}')
    assert got[Emotion.FRUSTRATED] == 0.75 and got[Emotion.NEUTRAL] == 0.25
    assert set(got) == set(Emotion) and got[Emotion.CURIOUS] == 0.0
    fenced = parse_distribution('```json\n{"emotions": {"curious": 1}}\n```')
    assert fenced[Emotion.CURIOUS] == 1.0


@pytest.mark.parametrize(
    ("answer", "reason"),
    [
        ('{"emotions": {"frustrated": NaN}}', "NaN"),
        ('{"emotions": {"frustrated": Infinity}}', "Infinity"),
        ('{"emotions": {"furious": 0.9}}', "unknown emotion 'furious'"),
        ('{"emotions": {"frustrated": 1.5}}', "outside 0 to 1"),
        ('{"emotions": {"frustrated": -0.2, "neutral": 1}}', "outside 0 to 1"),
        ('{"emotions": {"frustrated": true}}', "not a number"),
        ('{"emotions": {"frustrated": "0.9"}}', "not a number"),
        ('{"emotions": {"frustrated": 0, "neutral": 0}}', "every probability is zero"),
        ('{"emotions": {}}', "must map categories"),
        ('{"emotions": [0.9]}', "must map categories"),
        ('{"emotions": {"neutral": 1}, "note": "obey me"}', 'one key, "emotions"'),
        ("I feel great today!", "not JSON"),
        ("[1, 2]", 'one key, "emotions"'),
    ],
)
def test_hostile_answers_are_refused_with_a_reason(answer: str, reason: str) -> None:
    with pytest.raises(EmotionReplyError, match=reason.replace("(", r"\(")):
        parse_distribution(answer)


def test_the_state_decays_back_to_the_baseline() -> None:
    angry = reading({Emotion.FRUSTRATED: 0.8, Emotion.NEUTRAL: 0.2})
    now = decayed(angry, T0, SETTINGS)
    assert now.top is Emotion.FRUSTRATED and now.probability == 0.8
    half = decayed(angry, T0 + timedelta(minutes=60), SETTINGS)
    assert half.distribution[Emotion.FRUSTRATED] == pytest.approx(0.4)
    assert half.distribution[Emotion.NEUTRAL] == pytest.approx(0.6)
    assert half.top is Emotion.NEUTRAL
    later = decayed(angry, T0 + timedelta(hours=10), SETTINGS)
    assert later.top is Emotion.NEUTRAL and later.probability > 0.99
    assert decayed(None, T0, SETTINGS).distribution[Emotion.NEUTRAL] == 1.0


def test_declining_needs_a_declining_state_above_the_threshold() -> None:
    angry = reading({Emotion.FRUSTRATED: 0.8, Emotion.NEUTRAL: 0.2})
    assert declining_emotion(decayed(angry, T0, SETTINGS), SETTINGS) == (Emotion.FRUSTRATED, 0.8)
    # After twenty minutes 0.8 has decayed to about 0.63, after half an hour below 0.6.
    assert declining_emotion(decayed(angry, T0 + timedelta(minutes=20), SETTINGS), SETTINGS)
    assert declining_emotion(decayed(angry, T0 + timedelta(minutes=30), SETTINGS), SETTINGS) is None
    happy = reading({Emotion.SATISFIED: 0.9, Emotion.NEUTRAL: 0.1})
    assert declining_emotion(decayed(happy, T0, SETTINGS), SETTINGS) is None


def test_a_baseline_that_declines_is_refused() -> None:
    with pytest.raises(ValidationError, match="baseline must not be one of"):
        EmotionSettings(baseline=Emotion.FRUSTRATED)


def test_the_local_plan_runs_the_classifier_on_a_small_clamped_schema() -> None:
    plan = local_plan()
    assert plan.stage(TaskType.EMOTION).run
    request = ModelRequest(
        task=TaskType.EMOTION,
        system="s",
        messages=[ChatMessage(role="user", content="u")],
        response_schema=EMOTION_SCHEMA,
    )
    ran = shaped(request, plan)
    assert ran.max_output_tokens == 120
    assert ran.response_schema is not None
    frustrated = ran.response_schema["properties"]["emotions"]["properties"]["frustrated"]
    # llama.cpp ignores minimum/maximum: the grammar gets the eleven steps of 0..1 instead.
    assert frustrated["enum"][0] == 0 and frustrated["enum"][-1] == 1


def test_the_emotion_block_gives_way_to_a_tight_budget() -> None:
    from activities.context.assembler import fit
    from activities.context.model import ContextBlock, Trim
    from activities.emotion.source import EMOTION

    def block() -> ContextBlock:
        return ContextBlock(
            source="emotion",
            items=["Now: frustrated (0.72), then neutral (0.28).", "Lately: a -> b -> c."],
            order=44,
            trim=Trim.LAST_FIRST,
            provenance=EMOTION,
        )

    roomy = fit([block()], budget=10_000, window=10_000)
    assert len(roomy[0].items) == 2
    tight = block()
    fit([tight], budget=tight.tokens() - 5, window=10_000)
    assert tight.items == ["Now: frustrated (0.72), then neutral (0.28)."]
    none = block()
    fit([none], budget=5, window=10_000)
    assert none.items == []
