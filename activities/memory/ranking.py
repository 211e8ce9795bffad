"""Relevance of a memory to an input (spec §4 step 2): pure functions, no I/O.

A score is a weighted mean of four values in [0, 1]:

* semantic: cosine similarity of the input's and the record's vectors (negative counts as 0);
* lexical: the share of the input's words (stemmed, stop words dropped) found in the summary,
  which rescues names and rare terms a sentence encoder blurs;
* recency: ``0.5 ** (age / half_life)``;
* participants: the share of the people present who appear in the record.

When the encoder is unavailable the semantic weight moves to the lexical value, so a lexical
ranking still spans [0, 1] and bands keep their meaning. Recency and people only ever add
their own (small) weights: they rank among matches, they do not make a match.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable
from dataclasses import dataclass
from datetime import datetime

from schemas.memory import MemorySettings, ScoreBand, Sensitivity
from schemas.recall import RelevanceSignals

SECONDS_PER_DAY = 86_400.0


@dataclass(frozen=True)
class Weights:
    """How much each relevance value counts."""

    semantic: float = 0.6
    lexical: float = 0.15
    recency: float = 0.15
    participants: float = 0.1

    @classmethod
    def from_settings(cls, settings: MemorySettings) -> Weights:
        """The configured weights."""
        return cls(
            semantic=settings.recall_weight_semantic,
            lexical=settings.recall_weight_lexical,
            recency=settings.recall_weight_recency,
            participants=settings.recall_weight_participants,
        )


@dataclass(frozen=True)
class Bands:
    """Score thresholds of the strong and moderate bands; below moderate is weak."""

    strong: float = 0.6
    moderate: float = 0.4

    @classmethod
    def from_settings(cls, settings: MemorySettings) -> Bands:
        """The configured thresholds."""
        return cls(strong=settings.recall_band_strong, moderate=settings.recall_band_moderate)


def visible(
    sensitivity: str, record_participants: Collection[str], present: Collection[str]
) -> bool:
    """Whether a record may be surfaced with ``present`` in the conversation.

    The rules of :mod:`schemas.memory`: public to anyone; private when everyone present took
    part; confidential only one-on-one with a participant; restricted never. An unknown
    designation is treated as restricted: a typo must not open a record up.

    Args:
        sensitivity: The record's designation.
        record_participants: Person IDs of those the record remembers.
        present: Person IDs of everyone present now.
    """
    people = set(present)
    if sensitivity == Sensitivity.PUBLIC:
        return True
    if sensitivity == Sensitivity.PRIVATE:
        return people <= set(record_participants)
    if sensitivity == Sensitivity.CONFIDENTIAL:
        return len(people) == 1 and people <= set(record_participants)
    return False


def recency(created_at: datetime, now: datetime, half_life_days: float) -> float:
    """Temporal decay: 1 for a record made now, 0.5 at one half-life, towards 0 after.

    A record stamped in the future (clock skew between hosts) counts as brand new.
    """
    age_days = max(0.0, (now - created_at).total_seconds() / SECONDS_PER_DAY)
    return float(0.5 ** (age_days / half_life_days))


def participant_match(record_participants: Iterable[str], present: Collection[str]) -> float:
    """The share of the people present who appear in the record (0 when nobody is present)."""
    people = set(present)
    if not people:
        return 0.0
    return len(people & set(record_participants)) / len(people)


def lexical_overlap(query_lexemes: Collection[str], summary_lexemes: Iterable[str]) -> float:
    """The share of the input's lexemes that occur in the summary."""
    wanted = set(query_lexemes)
    if not wanted:
        return 0.0
    return len(wanted & set(summary_lexemes)) / len(wanted)


def combine(signals: RelevanceSignals, weights: Weights) -> float:
    """The weighted mean of the signals, in [0, 1].

    Without a semantic value (lexical ranking) its weight goes to the lexical value, the other
    evidence of a match: recency and people alone must not make an unrelated record strong.
    """
    lexical_weight = weights.lexical
    parts = [(weights.recency, signals.recency), (weights.participants, signals.participants)]
    if signals.semantic is None:
        lexical_weight += weights.semantic
    else:
        parts.append((weights.semantic, signals.semantic))
    parts.append((lexical_weight, signals.lexical))
    total = sum(weight for weight, _ in parts)
    if total <= 0:
        return 0.0
    score = sum(weight * max(0.0, min(1.0, value)) for weight, value in parts) / total
    return round(score, 4)


def band(score: float, bands: Bands) -> ScoreBand:
    """The band a score falls in."""
    if score >= bands.strong:
        return ScoreBand.STRONG
    if score >= bands.moderate:
        return ScoreBand.MODERATE
    return ScoreBand.WEAK
