"""What the scripted model says during a soak: an acknowledgement per message, and memories
rated important exactly when a message carries the important word."""

from __future__ import annotations

import json
from pathlib import Path

from schemas.memory import Emotion
from systemtests.soak.load import IMPORTANT_WORD

SUMMARY_SYSTEM = "forming an autobiographical memory"
RATING_SYSTEM = "rating how much one of your own memories matters"
CLASSIFY_SYSTEM = "classifying one of your own memories"
GRAPH_SYSTEM = "list the entities it names and the"


def soak_script(path: Path, *, respond_delay_ms: int = 150) -> Path:
    """The scripted model: acknowledge each message; rate memories of keepsakes important.

    Every background task it is asked gets a well-formed answer, so none fails and retries.
    """
    important = {"summary": f"I was trusted with a {IMPORTANT_WORD} to remember."}
    ordinary = {"summary": "I had a short, ordinary exchange."}
    rating = {
        "emotional_significance": 3,
        "decision_making": 2,
        "novelty": 2,
        "continuation": 2,
        "explicit_importance": 2,
        "reason": "soak",
    }
    classification = {
        "emotions": {"engaged": 0.6, "neutral": 0.4},
        "sensitivity": "private",
        "tags": ["soak"],
    }
    # The per-exchange emotion reading: a settled, content agent (its trajectory is stored).
    mood = {e.value: 0.0 for e in Emotion} | {"engaged": 0.6, "neutral": 0.4}
    rules = [
        {"task": "respond", "delay_ms": respond_delay_ms, "reply": "ack: {last}"},
        {"task": "emotion", "reply": json.dumps({"emotions": mood})},
        {
            "task": "summarize",
            "system_match": SUMMARY_SYSTEM,
            "match": IMPORTANT_WORD,
            "reply": json.dumps(important),
        },
        {"task": "summarize", "system_match": SUMMARY_SYSTEM, "reply": json.dumps(ordinary)},
        {
            "task": "rate",
            "system_match": RATING_SYSTEM,
            "match": IMPORTANT_WORD,
            "reply": json.dumps({**rating, "importance": 9}),
        },
        {
            "task": "rate",
            "system_match": RATING_SYSTEM,
            "reply": json.dumps({**rating, "importance": 1}),
        },
        {"task": "classify", "system_match": CLASSIFY_SYSTEM, "reply": json.dumps(classification)},
        # The knowledge graph's extraction: nothing named in an acknowledgement.
        {
            "task": "observe",
            "system_match": GRAPH_SYSTEM,
            "reply": json.dumps({"entities": [], "relations": []}),
        },
    ]
    path.write_text(json.dumps({"rules": rules}), encoding="utf-8")
    return path
