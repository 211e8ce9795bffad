"""Memory formation without a model: a faithful first-person record, rated by a fixed rubric.

On the built-in tiny model (SmolLM2-135M) formation failed the person every way it could: the
one memory that formed missed every fact and was rated 1/10, below the cull threshold; others
copied the prompt or took the person's facts as the agent's own. A model that small cannot
summarise or judge, so its call plan does not ask it to (``StagePlan.run`` off for SUMMARIZE and
RATE) and formation does what can be done without one:

- :func:`plain_summary`: "I talked with Ada on terminal:kitchen. Ada said: "..."" (or "I met
  Ada for the first time" when someone introduced themselves): who was there and what people
  said, quoted and trimmed to the plan's length, in the agent's first person (the memory block
  fences it as possibly quoting others, as every summary may);
- :func:`plain_rating`: importance from what was said, by a rubric that needs no judgement:
  a request to remember (8), someone introducing themselves (7), a decision or plan made
  together (5), a person telling something of their own (5), a feeling named (+1); anything
  else is small talk (2), which maintenance culls once it is old.

A floor, not a mind: the record keeps the facts where a model would have lost them.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from activities.memory.explicit import ASKED_IMPORTANCE, asked_to_remember
from store.queries.memory_formation import RangeTurn

QUOTE_CHARS = 220
"""Most of one turn quoted: a long turn is cut at a word, with an ellipsis."""

INTRODUCTION, DECISION, DISCLOSURE, SMALL_TALK = 7, 5, 5, 2
"""The rubric's ratings (see the module's docstring); a named feeling adds one."""

_INTRODUCES = re.compile(
    r"\b(?:I'm|I\s+am|my\s+name\s+is|call\s+me|this\s+is)\s+[A-Z][\w'-]+"
    r"|\bnice\s+to\s+meet\s+you\b|\bpleased\s+to\s+meet\s+you\b",
)
_DECIDES = re.compile(
    r"\b(?:let's|let\s+us|we\s+(?:should|need\s+to|must|will|agreed|decided)|I'll|I\s+will"
    r"|plan(?:ned|ning)?|deadline|budget|decide[ds]?|promise[ds]?)\b",
    re.IGNORECASE,
)
_OWN = re.compile(
    r"\b(?:I\s+(?:am|was|have|had|once|used\s+to|live|work|love|hate|like|prefer|need|want)"
    r"|I'm|I've|my\s+\w+)\b",
    re.IGNORECASE,
)
_FEELS = re.compile(
    r"\b(?:love[ds]?|hate[ds]?|afraid|scared|worried|anxious|excited|thrilled|happy|sad|upset"
    r"|angry|proud|grateful|miss(?:ed)?|means?\s+a\s+lot|lonely|hurt|allergic)\b",
    re.IGNORECASE,
)


def _quote(text: str, most: int = QUOTE_CHARS) -> str:
    line = " ".join(text.split()).replace('"', "'")
    if len(line) <= most:
        return line
    return line[:most].rsplit(" ", 1)[0].rstrip(",;:") + "..."


def _names(turns: Sequence[RangeTurn]) -> list[str]:
    seen: list[str] = []
    for turn in turns:
        if turn.role == "person" and turn.speaker_name not in seen:
            seen.append(turn.speaker_name)
    return seen


def _joined(names: Sequence[str]) -> str:
    if len(names) <= 1:
        return "".join(names) or "someone"
    return ", ".join(names[:-1]) + " and " + names[-1]


def plain_summary(turns: Sequence[RangeTurn], *, channel: str, max_chars: int) -> str:
    """The first-person record of ``turns``, at most ``max_chars`` long.

    What people said comes first, from the start, as far as it fits; the agent's own lines
    only when all of theirs fit. The kept turns are quoted in the order they were said.
    """
    names = _joined(_names(turns))
    head = f"I talked with {names} on {channel}."
    if any(t.role == "person" and _INTRODUCES.search(t.text) for t in turns):
        head = f"I met {names} for the first time, on {channel}."
    theirs = [
        (i, f'{t.speaker_name} said: "{_quote(t.text)}"')
        for i, t in enumerate(turns)
        if t.role == "person"
    ]
    own = [(i, f'I said: "{_quote(t.text)}"') for i, t in enumerate(turns) if t.role != "person"]
    chosen: list[tuple[int, str]] = []
    room = max_chars - len(head)
    for group in (theirs, own):
        for i, line in group:
            if len(line) + 1 > room:
                return _render(head, chosen, max_chars)  # the rest of what was said is cut
            chosen.append((i, line))
            room -= len(line) + 1
    return _render(head, chosen, max_chars)


def _render(head: str, chosen: list[tuple[int, str]], max_chars: int) -> str:
    """The head, then the chosen lines in the order they were said."""
    chosen.sort()
    return " ".join([head, *(line for _, line in chosen)])[:max_chars]


def plain_rating(turns: Sequence[RangeTurn]) -> tuple[int, dict[str, Any]]:
    """The importance of a memory of ``turns`` by the fixed rubric, and why (its rubric)."""
    said = [t.text for t in turns if t.role == "person"]
    reasons: list[str] = []
    importance = SMALL_TALK
    asked = asked_to_remember(said)
    if asked:
        importance, reasons = ASKED_IMPORTANCE, ["asked to remember"]
    elif any(_INTRODUCES.search(text) for text in said):
        importance, reasons = INTRODUCTION, ["someone introduced themselves"]
    elif any(_DECIDES.search(text) for text in said):
        importance, reasons = DECISION, ["a plan or decision"]
    elif any(_OWN.search(text) for text in said):
        importance, reasons = DISCLOSURE, ["they told me something of their own"]
    else:
        reasons = ["small talk"]
    if importance < 10 and any(_FEELS.search(t.text) for t in turns):
        importance += 1
        reasons.append("a feeling named")
    rubric: dict[str, Any] = {
        "importance": importance,
        "reason": "; ".join(reasons),
        "rated_by": "rubric",
    }
    if asked:
        rubric["asked_to_remember"] = asked[:5]
    return importance, rubric
