"""A critic's structured output: the schema it is held to, and parsing with repair.

Providers constrain the reply to :data:`CRITIQUE_SCHEMA`, but a model can still return prose,
fenced JSON, a bare list, extra keys, absurdly long fields or hundreds of objections. What can
be salvaged is (``repaired``); what cannot raises :class:`CriticOutputError` so the activity can
ask again, then give up without failing the turn.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from activities.deliberation.calls import clip, find_json
from schemas.deliberation import Objection

MAX_OUTPUT_CHARS = 1_000_000
"""Longer critic output is not parsed at all: no sane critique is that long (a reply is bounded
by its output tokens; this guards against a misbehaving endpoint)."""

CRITIQUE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "objections": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "type": {"type": "string"},
                    "span": {"type": "string"},
                    "explanation": {"type": "string"},
                    "severity": {"type": "integer", "minimum": 1, "maximum": 10},
                    "correction": {"type": "string"},
                },
                "required": ["type", "span", "explanation"],
                "additionalProperties": False,
            },
        }
    },
    "required": ["objections"],
    "additionalProperties": False,
}
"""What a critic must return: ``{"objections": [...]}``."""


class CriticOutputError(ValueError):
    """Nothing usable in the critic's output; the message says what was wrong."""


def _items(document: Any) -> tuple[list[Any], bool]:
    if isinstance(document, Mapping):
        if isinstance(document.get("objections"), list):
            return list(document["objections"]), False
        if "explanation" in document:  # one bare objection
            return [document], True
        raise CriticOutputError('the JSON object has no "objections" list')
    if isinstance(document, list):
        return document, True
    raise CriticOutputError("the JSON is neither an object nor a list")


def _severity(value: Any) -> int | None:
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, str):
        try:
            value = float(value.strip())
        except ValueError:
            return None
    if not isinstance(value, int | float) or value != value:  # NaN
        return None
    if 0 < value <= 1 and isinstance(value, float):
        value = value * 10  # a 0-1 scale, read as tenths
    return min(10, max(1, round(float(value))))


def _label(value: Any) -> str:
    text = re.sub(r"[^a-z0-9]+", "_", str(value or "objection").lower()).strip("_")
    return (text or "objection")[:40]


def _text(value: Any) -> str:
    return value.strip() if isinstance(value, str) else ""


def _objection(item: Any) -> Objection | None:
    if not isinstance(item, Mapping):
        return None
    explanation = _text(item.get("explanation") or item.get("reason") or item.get("why"))
    if not explanation:
        return None
    span = _text(item.get("span") or item.get("offending_span") or item.get("quote"))
    correction = _text(item.get("correction") or item.get("suggested_correction"))
    return Objection(
        type=_label(item.get("type") or item.get("kind")),
        span=clip(span, 600),
        explanation=clip(explanation, 1200),
        severity=_severity(item.get("severity")),
        correction=clip(correction, 1200) or None,
    )


def parse_objections(text: str, *, limit: int) -> tuple[list[Objection], bool]:
    """The objections in a critic's output, at most ``limit``, and whether repair was needed.

    Raises:
        CriticOutputError: Nothing usable: not JSON, or not shaped like a critique.
    """
    text = text.strip()
    if not text:
        raise CriticOutputError("the output is empty")
    if len(text) > MAX_OUTPUT_CHARS:
        raise CriticOutputError(f"the output is {len(text):,} characters long")
    try:
        document, dug_out = find_json(text)
    except ValueError as err:
        raise CriticOutputError(str(err)) from None
    items, reshaped = _items(document)
    objections = [o for o in map(_objection, items) if o is not None]
    if items and not objections:
        raise CriticOutputError("no objection has an explanation")
    repaired = dug_out or reshaped or len(objections) != len(items) or len(objections) > limit
    if not repaired:
        repaired = any(
            set(item) - {"type", "span", "explanation", "severity", "correction"}
            for item in items
            if isinstance(item, Mapping)
        )
    return objections[:limit], repaired
