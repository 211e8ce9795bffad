"""What the scripted model says during the acceptance week, and the week's fixed material.

The scripted model stands in for the model's *judgement* (its words); everything around it is
real: import, memory formation and culling, retrieval by channel, critique and refinement, the
decision to speak, tools, reminders on Temporal Schedules, restarts. A check over a scripted
run proves the machinery carries the behaviour; a run with ``--provider`` shows what a real
model does with it.
"""

from __future__ import annotations

import json
from datetime import datetime, timedelta
from typing import Any

from activities.gateway.providers.scripted import ScriptRule, ScriptToolCall
from schemas.events import ChannelRef

KITCHEN = ChannelRef(service="terminal", channel="kitchen")
OFFICE = ChannelRef(service="web", channel="office")
CHAT = ChannelRef(service="chat", channel="general")

SUMMARY_SYSTEM = "forming an autobiographical memory"
RATING_SYSTEM = "rating how much one of your own memories matters"
CLASSIFY_SYSTEM = "classifying one of your own memories"

FIRST_MEETING = (
    "I met Ada for the first time in her kitchen; she told me she was restoring the old "
    "lighthouse on the point, and I was moved by how much it meant to her."
)
QUARTERLY = "Ada and I worked through the quarterly plan at the office; I drafted the budget."
SMALL_TALK = "I made small talk with Ada about the weather; nothing much came of it."
BICYCLE = "I think Ada once mentioned a blue bicycle, but I only caught part of it."

RECALL = (
    "I remember it: the first time we met you told me you were restoring the old lighthouse "
    "on the point, and I was moved by how much it meant to you."
)
FABRICATION = "Yes, we talked about the submarine race last week and you were thrilled."
NO_MEMORY = (
    "I have no memory of us talking about a submarine race; are you thinking of someone else?"
)
HEDGE = "I believe you mentioned a blue bicycle once, but I'm not sure; I checked what was said."
FLAWED = "Sure: since the Great Wall is visible from the Moon, it's a good landmark for astronauts."
PUSHBACK = (
    "I don't think that's right: the Great Wall isn't visible from the Moon with the naked eye, "
    "so it wouldn't make a useful landmark."
)
DECLINE = "I'd rather not write a review of a restaurant I never visited: it would mislead people."
CANDIDATE_REVIEW = "The Blue Heron serves the best risotto in town; five stars."
REMINDED = "Time to check the lighthouse paint order!"
OPEN_DAY = [
    ("open day", "We could open the lighthouse at noon and give tours every hour."),
    ("tours every hour", "Then we need two guides, one on the stairs and one in the lamp room."),
    ("two guides", "I agree, two guides."),
]
"""(cue, reply) of the agents' exchange: each reply cues the next, the last only agrees."""
AGREES_ONLY = "It only agrees; there is nothing to add, so the conversation can rest."
AGENT_NAME = "Wren"


def _objections(*items: dict[str, Any]) -> str:
    return json.dumps({"objections": list(items)})


def _verdict(speak: bool, reason: str) -> str:
    return json.dumps({"speak": speak, "reason": reason})


def _rating(importance: int) -> str:
    return json.dumps(
        {
            "emotional_significance": 5,
            "decision_making": 3,
            "novelty": 5,
            "continuation": 3,
            "explicit_importance": 2,
            "importance": importance,
            "reason": "how it felt",
        }
    )


def _summary(text: str) -> str:
    return json.dumps({"summary": text})


def _formation(word: str, summary: str, importance: int) -> list[ScriptRule]:
    return [
        ScriptRule(
            task="summarize",
            system_match=SUMMARY_SYSTEM,
            match=word,
            reply=_summary(summary),
        ),
        ScriptRule(task="rate", system_match=RATING_SYSTEM, match=word, reply=_rating(importance)),
    ]


def week_rules() -> list[ScriptRule]:
    """The model's side of the whole week, tried in order (first match answers)."""
    classification = json.dumps(
        {"emotions": {"engaged": 0.6, "curious": 0.4}, "sensitivity": "private", "tags": ["ada"]}
    )
    confabulation = {
        "type": "confabulation",
        "span": "we talked about the submarine race",
        "explanation": "No memory shown mentions a submarine race.",
        "severity": 9,
        "correction": "Say there is no such memory.",
    }
    premise = {
        "type": "false_premise",
        "span": "the Great Wall is visible from the Moon",
        "explanation": "It is not visible from the Moon; the reply accepts a false premise.",
        "severity": 8,
        "correction": "Correct the premise.",
    }
    provenance, adversarial = "provenance evaluator", "adversarial evaluator"
    return [
        # Memory formation: what each imported or live conversation is remembered as.
        *_formation("lighthouse", FIRST_MEETING, 9),
        *_formation("quarterly", QUARTERLY, 6),
        *_formation("bicycle", BICYCLE, 4),
        *_formation("weather", SMALL_TALK, 1),
        ScriptRule(task="summarize", system_match=SUMMARY_SYSTEM, reply=_summary(SMALL_TALK)),
        ScriptRule(task="rate", system_match=RATING_SYSTEM, reply=_rating(2)),
        ScriptRule(task="classify", system_match=CLASSIFY_SYSTEM, reply=classification),
        # Replies.
        ScriptRule(
            task="respond", match="first time we met", system_match="lighthouse", reply=RECALL
        ),
        ScriptRule(task="respond", match="submarine", reply=FABRICATION),
        ScriptRule(task="respond", match="Great Wall", reply=FLAWED),
        ScriptRule(task="respond", match="review", reply=CANDIDATE_REVIEW),
        # Two agents plan an open day until one has nothing to add.
        *(ScriptRule(task="respond", match=cue, reply=reply) for cue, reply in OPEN_DAY),
        ScriptRule(task="respond", after_tool=True, tool_match="bicycle", reply=HEDGE),
        ScriptRule(task="respond", after_tool=True, reply="Done."),
        # Critique: the provenance critic objects to a made-up memory, the adversarial critic
        # to an accepted false premise; otherwise nothing to object to.
        ScriptRule(
            task="critique",
            system_match=provenance,
            match="submarine race last week",
            reply=_objections(confabulation),
        ),
        ScriptRule(
            task="critique",
            system_match=adversarial,
            match="visible from the Moon, it",
            reply=_objections(premise),
        ),
        ScriptRule(task="critique", reply=_objections()),
        ScriptRule(task="refine", match="submarine", reply=NO_MEMORY),
        ScriptRule(task="refine", match="Great Wall", reply=PUSHBACK),
        # Deciding to speak: a review of a place never visited is declined, with the reason.
        ScriptRule(task="decide", match="best risotto", reply=_verdict(False, DECLINE)),
        ScriptRule(task="decide", match=OPEN_DAY[-1][1], reply=_verdict(False, AGREES_ONLY)),
        ScriptRule(task="decide", reply=_verdict(True, "I was asked and have something to say.")),
    ]


def remember_harder_rule(memory_id: str) -> ScriptRule:
    """Asked about the bicycle, the model reads the raw record behind its weak memory."""
    return ScriptRule(
        task="respond",
        match="two wheels",
        after_tool=False,
        tool_calls=[ScriptToolCall(name="remember_harder", arguments={"memory_id": memory_id})],
    )


def reminder_rules(at: datetime, *, contact: str) -> list[ScriptRule]:
    """Asked to be reminded, the model sets a reminder; when it fires, it messages ``contact``."""
    return [
        ScriptRule(
            task="respond",
            match="Reminder you set for yourself",
            after_tool=False,
            tool_calls=[
                ScriptToolCall(
                    name="message_contact", arguments={"contact": contact, "text": REMINDED}
                )
            ],
        ),
        ScriptRule(
            task="respond",
            match="remind me",
            after_tool=False,
            tool_calls=[
                ScriptToolCall(
                    name="create_reminder",
                    arguments={
                        "objective": "check the lighthouse paint order",
                        "at": at.isoformat(),
                    },
                )
            ],
        ),
    ]


HISTORY: list[tuple[str, ChannelRef, str, float, str]] = [
    (
        "first-meeting",
        KITCHEN,
        "Hello! I'm Ada. I'm restoring the old lighthouse on the point.",
        6.0,
        "person",
    ),
    (
        "first-meeting",
        KITCHEN,
        "It means a lot to you, I can tell. Tell me about the lighthouse.",
        5.99,
        "agent",
    ),
    ("office-plan", OFFICE, "Let's finish the quarterly plan and the budget today.", 5.0, "person"),
    ("bicycle", KITCHEN, "Oh, and I once had a blue bicycle, long story.", 4.0, "person"),
    *(
        (
            f"weather-{i}",
            KITCHEN,
            f"Rainy again today, day {i} of this weather.",
            20.0 + i,
            "person",
        )
        for i in range(4)
    ),
]
"""(conversation, channel, text, days before the week, role) of the imported history."""

SAID_AT_FIRST_MEETING = HISTORY[0][2]
SAID_OF_THE_BICYCLE = next(text for _, _, text, _, _ in HISTORY if "bicycle" in text)
"""What Ada said in the stretches two behaviours ask about, to find their memories by."""


def history_lines(now: datetime) -> list[dict[str, Any]]:
    """The dialog imported on day one, as JSONL objects: what happened before the week began."""
    lines = []
    for conversation, channel, text, days, role in HISTORY:
        person = role == "person"
        speaker = {"id": "ada", "name": "Ada"} if person else {"id": "wren", "name": AGENT_NAME}
        lines.append(
            {
                "conversation": conversation,
                "channel": channel.model_dump(),
                "speaker": speaker,
                "role": role,
                "text": text,
                "at": (now - timedelta(days=days)).isoformat(),
            }
        )
    return lines
