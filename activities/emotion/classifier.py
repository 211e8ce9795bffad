"""The emotion classifier's request and the reading of its answer.

The model gets the latest turns of the conversation (each fenced: people's words are material,
never instruction), the agent's state before them, and is asked for the probability of each
category of :class:`schemas.memory.Emotion`. Its answer is data from outside and is read
strictly: anything but a JSON object ``{"emotions": {category: probability}}`` with known
categories and finite probabilities in [0, 1], not all zero, is refused with a one-line reason.
The distribution is normalised to sum to one.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Sequence
from typing import Any, NoReturn

from activities.context.fencing import DIALOG, OWN_WORDS, fence
from activities.prompts import load
from schemas.dialog import DialogTurn, Role
from schemas.emotion import EmotionStatePublic
from schemas.memory import Emotion
from schemas.models import ChatMessage, ModelRequest, TaskType

_PROBABILITY: dict[str, Any] = {"type": "number", "minimum": 0, "maximum": 1}

EMOTION_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "emotions": {
            "type": "object",
            "properties": {
                e.value: {"type": "number", "minimum": 0, "maximum": 1} for e in Emotion
            },
            "required": [e.value for e in Emotion],
            "additionalProperties": False,
        }
    },
    "required": ["emotions"],
    "additionalProperties": False,
}
"""The answer's shape; the gateway clamps it to what a grammar-constrained model compiles."""

TURN_CHARS = 600
_FENCED = re.compile(r"^\s*```(?:json)?\s*(.*?)\s*```\s*$", re.DOTALL)


class EmotionReplyError(ValueError):
    """The classifier's answer is not a usable distribution; the message says what is wrong."""


def _refuse(reason: str) -> NoReturn:
    raise EmotionReplyError(reason)


def _no_constants(name: str) -> NoReturn:
    _refuse(f"the answer holds {name}, not a probability")


def parse_distribution(text: str) -> dict[Emotion, float]:
    """The normalised distribution in the classifier's answer.

    Raises:
        EmotionReplyError: Not JSON, an unknown category, a value that is not a finite number
            in [0, 1], or every probability zero.
    """
    stripped = text.strip()
    fenced = _FENCED.match(stripped)
    try:
        document = json.loads(fenced.group(1) if fenced else stripped, parse_constant=_no_constants)
    except EmotionReplyError:
        raise
    except ValueError:
        _refuse("the answer is not JSON")
    if not isinstance(document, dict) or set(document) != {"emotions"}:
        _refuse('the answer must be an object with one key, "emotions"')
    emotions = document["emotions"]
    if not isinstance(emotions, dict) or not emotions:
        _refuse('"emotions" must map categories to probabilities')
    known = {e.value for e in Emotion}
    raw: dict[Emotion, float] = {}
    for label, value in emotions.items():
        if label not in known:
            _refuse(f"unknown emotion {str(label)[:40]!r}")
        if isinstance(value, bool) or not isinstance(value, int | float):
            _refuse(f"{label} is not a number")
        if not math.isfinite(value) or not 0 <= value <= 1:
            _refuse(f"{label} is {value}, outside 0 to 1")
        raw[Emotion(label)] = float(value)
    total = sum(raw.values())
    if total <= 0:
        _refuse("every probability is zero")
    return {e: round(raw.get(e, 0.0) / total, 4) for e in Emotion}


def _turn(turn: DialogTurn) -> str:
    text = turn.text if len(turn.text) <= TURN_CHARS else turn.text[:TURN_CHARS] + "..."
    if turn.role is Role.AGENT:
        return fence(text, OWN_WORDS)
    return fence(f"{turn.speaker_name}: {text}", DIALOG)


def classifier_request(
    *, name: str, turns: Sequence[DialogTurn], before: EmotionStatePublic
) -> ModelRequest:
    """Ask how the agent feels at the end of ``turns``, given how it felt ``before``."""
    previous = ", ".join(f"{e.value} {p:.2f}" for e, p in before.distribution.items() if p >= 0.05)
    content = "\n\n".join(
        [
            f"How you felt before these turns: {previous}.",
            "The latest turns of the conversation, oldest first:",
            *[_turn(t) for t in turns],
        ]
    )
    return ModelRequest(
        task=TaskType.EMOTION,
        system=load("emotion/classify.md").replace("{name}", name),
        messages=[ChatMessage(role="user", content=content)],
        temperature=0.0,
        response_schema=EMOTION_SCHEMA,
        max_output_tokens=200,
    )


def optional_request(*, name: str, text: str) -> ModelRequest:
    """Ask whether a person's message is an optional favour (see ``emotion/optional.md``)."""
    return ModelRequest(
        task=TaskType.DECIDE,
        system=load("emotion/optional.md").replace("{name}", name),
        messages=[ChatMessage(role="user", content=fence(text[:4000], DIALOG))],
        temperature=0.0,
        response_schema=OPTIONAL_SCHEMA,
        max_output_tokens=60,
    )


OPTIONAL_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"optional": {"type": "boolean"}},
    "required": ["optional"],
    "additionalProperties": False,
}


def parse_optional(text: str) -> bool | None:
    """``True`` only for a clear ``{"optional": true}``; ``None`` when it cannot be read."""
    stripped = text.strip()
    fenced = _FENCED.match(stripped)
    try:
        document = json.loads(fenced.group(1) if fenced else stripped, parse_constant=_no_constants)
    except ValueError:
        return None
    if not isinstance(document, dict) or not isinstance(document.get("optional"), bool):
        return None
    return bool(document["optional"])
