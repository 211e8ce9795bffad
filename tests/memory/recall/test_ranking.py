"""The relevance function's parts: decay, people, words, the weighted mean and the bands."""

from __future__ import annotations

from datetime import timedelta

import pytest

from activities.memory import ranking
from schemas.memory import MemorySettings, ScoreBand
from schemas.recall import RelevanceSignals
from tests.memory.recall.records import NOW


def test_recency_halves_every_half_life() -> None:
    assert ranking.recency(NOW, NOW, 30) == 1.0
    assert ranking.recency(NOW - timedelta(days=30), NOW, 30) == pytest.approx(0.5)
    assert ranking.recency(NOW - timedelta(days=90), NOW, 30) == pytest.approx(0.125)
    # Clock skew between hosts: a record from the future is simply new.
    assert ranking.recency(NOW + timedelta(hours=1), NOW, 30) == 1.0


def test_participant_match_counts_the_people_present_who_were_there() -> None:
    assert ranking.participant_match(["a", "b"], ["a", "b"]) == 1.0
    assert ranking.participant_match(["a"], ["a", "b"]) == 0.5
    assert ranking.participant_match(["c"], ["a", "b"]) == 0.0
    assert ranking.participant_match(["a"], []) == 0.0


def test_lexical_overlap_is_the_share_of_input_words_found() -> None:
    assert ranking.lexical_overlap(["tomato", "plant"], ["water", "tomato", "plant"]) == 1.0
    assert ranking.lexical_overlap(["tomato", "lisbon"], ["tomato"]) == 0.5
    assert ranking.lexical_overlap([], ["tomato"]) == 0.0


def test_weighted_mean_spans_zero_to_one() -> None:
    weights = ranking.Weights()
    perfect = RelevanceSignals(semantic=1.0, lexical=1.0, recency=1.0, participants=1.0)
    nothing = RelevanceSignals(semantic=-0.3, lexical=0.0, recency=0.0, participants=0.0)
    assert ranking.combine(perfect, weights) == 1.0
    assert ranking.combine(nothing, weights) == 0.0


def test_recent_familiar_but_unrelated_record_stays_weak_in_both_modes() -> None:
    bands = ranking.Bands()
    weights = ranking.Weights()
    unrelated = RelevanceSignals(semantic=0.05, lexical=0.0, recency=1.0, participants=1.0)
    lexical_only = RelevanceSignals(semantic=None, lexical=0.0, recency=1.0, participants=1.0)
    assert ranking.band(ranking.combine(unrelated, weights), bands) is ScoreBand.WEAK
    assert ranking.band(ranking.combine(lexical_only, weights), bands) is ScoreBand.WEAK


def test_lexical_mode_moves_the_semantic_weight_to_words() -> None:
    weights = ranking.Weights()
    all_words = RelevanceSignals(semantic=None, lexical=1.0, recency=1.0, participants=1.0)
    half_words = RelevanceSignals(semantic=None, lexical=0.5, recency=0.0, participants=0.0)
    assert ranking.combine(all_words, weights) == 1.0
    assert ranking.combine(half_words, weights) == pytest.approx(0.375)


def test_bands_follow_the_configured_thresholds() -> None:
    bands = ranking.Bands.from_settings(
        MemorySettings(recall_band_strong=0.8, recall_band_moderate=0.5)
    )
    assert ranking.band(0.8, bands) is ScoreBand.STRONG
    assert ranking.band(0.79, bands) is ScoreBand.MODERATE
    assert ranking.band(0.5, bands) is ScoreBand.MODERATE
    assert ranking.band(0.49, bands) is ScoreBand.WEAK


def test_contradictory_recall_settings_are_refused_in_one_line() -> None:
    with pytest.raises(ValueError, match="recall_band_moderate must be below"):
        MemorySettings(recall_band_strong=0.5, recall_band_moderate=0.5)
    with pytest.raises(ValueError, match="recall_max_candidates must be at least"):
        MemorySettings(recall_candidates=100, recall_max_candidates=10)


@pytest.mark.parametrize(
    ("sensitivity", "participants", "present", "shown"),
    [
        ("public", [], ["a", "b"], True),
        ("private", ["a", "b"], ["a"], True),
        ("private", ["a", "b"], ["a", "b"], True),
        ("private", ["a"], ["a", "b"], False),
        ("confidential", ["a", "b"], ["a"], True),
        ("confidential", ["a", "b"], ["a", "b"], False),
        ("confidential", ["b"], ["a"], False),
        ("restricted", ["a"], ["a"], False),
        ("secret", ["a"], ["a"], False),  # an unknown designation never opens a record
    ],
)
def test_visibility_rules(
    sensitivity: str, participants: list[str], present: list[str], shown: bool
) -> None:
    assert ranking.visible(sensitivity, participants, present) is shown
