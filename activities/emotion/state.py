"""The current emotional state: the newest reading, decayed toward the baseline by its age.

A reading's distribution ``d``, taken at ``t0``, reads at ``t`` as ``w·d + (1-w)·b``, where
``b`` puts all its weight on the baseline category and ``w = 0.5 ** (age / half_life)``. The
state is computed whenever it is read, so nothing needs a timer to calm down.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime

from schemas.emotion import EmotionReadingPublic, EmotionSettings, EmotionStatePublic
from schemas.memory import Emotion


def top_of(distribution: Mapping[Emotion, float]) -> tuple[Emotion, float]:
    """The most probable category; ties go to the earlier one in :class:`Emotion`'s order."""
    order = list(Emotion)
    best = max(order, key=lambda e: (distribution.get(e, 0.0), -order.index(e)))
    return best, distribution.get(best, 0.0)


def baseline(settings: EmotionSettings) -> dict[Emotion, float]:
    """The distribution the state returns to."""
    return {e: float(e is settings.baseline) for e in Emotion}


def weight(age_seconds: float, settings: EmotionSettings) -> float:
    """How much of a reading is left after ``age_seconds`` (1 when new, 0.5 at a half-life)."""
    return float(0.5 ** (max(age_seconds, 0.0) / (settings.half_life_minutes * 60.0)))


def decayed(
    reading: EmotionReadingPublic | None, now: datetime, settings: EmotionSettings
) -> EmotionStatePublic:
    """The state as of ``now``: ``reading`` pulled toward the baseline by its age."""
    rest = baseline(settings)
    if reading is None:
        top, probability = top_of(rest)
        return EmotionStatePublic(as_of=now, top=top, probability=probability, distribution=rest)
    w = weight((now - reading.at).total_seconds(), settings)
    mixed = {e: round(w * reading.distribution.get(e, 0.0) + (1 - w) * rest[e], 4) for e in Emotion}
    top, probability = top_of(mixed)
    return EmotionStatePublic(
        as_of=now, top=top, probability=probability, distribution=mixed, reading=reading
    )


def declining_emotion(
    state: EmotionStatePublic, settings: EmotionSettings
) -> tuple[Emotion, float] | None:
    """The strongest declining category at or above the threshold, if any."""
    found = [
        (e, state.distribution.get(e, 0.0))
        for e in settings.decline_emotions
        if state.distribution.get(e, 0.0) >= settings.decline_threshold
    ]
    return max(found, key=lambda pair: pair[1]) if found else None
