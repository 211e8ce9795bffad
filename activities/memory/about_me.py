"""'What do you know about me?' answered from notes and memories, on plans that confirm in words.

SmolLM2 ignores the quick-facts block: told "please remember I prefer tea" and asked the next
day what it knows about the person, it talks about something else. On a plan that confirms
without the model (``confirm_done``), the question is recognised and the reply ends with what
the agent has noted about the person and the latest memories of conversations they took part
in on that channel, or says that it has nothing yet and how to change that.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from activities.memory.explicit import is_kept_request
from schemas.autonomy import QuickFact

_ASKS = re.compile(
    r"\b(?:what\s+(?:do|did)\s+you\s+(?:know|remember|recall)\s+(?:about|of)\s+me"
    r"|what\s+have\s+you\s+(?:noted|learned|learnt|remembered|kept)\s+about\s+me"
    r"|tell\s+me\s+what\s+you\s+(?:know|remember)\s+about\s+me"
    r"|what\s+do\s+you\s+have\s+on\s+me)\b",
    re.IGNORECASE,
)

NOTHING_YET = (
    "I have nothing noted about you yet. Tell me about yourself, or say "
    '"please remember ..." and I will keep it.'
)


def asks_what_i_know(text: str) -> bool:
    """Whether ``text`` asks what the agent knows about the person asking."""
    return _ASKS.search(text) is not None


def fact_line(fact: QuickFact) -> str:
    """One fact as the person reads it."""
    if is_kept_request(fact.key):
        return f'you asked me to remember "{fact.value}"'
    return f"{fact.key}: {fact.value}"


MEMORY_CHARS = 240
"""Each remembered conversation is quoted up to this many characters, cut at a word."""


def what_i_know(facts: Sequence[QuickFact], memories: Sequence[str] = (), *, most: int = 12) -> str:
    """What the agent has noted about the person, and remembers of them, in one paragraph.

    ``memories`` are the summaries of conversations the person took part in, newest first:
    what they told the agent without asking it to keep anything is there, not in the notes.
    """
    if not facts and not memories:
        return NOTHING_YET
    parts: list[str] = []
    if facts:
        lines = [fact_line(fact) for fact in facts[:most]]
        more = f"; and {len(facts) - most} more" if len(facts) > most else ""
        parts.append("What I have noted about you: " + "; ".join(lines) + more + ".")
    else:
        parts.append("I have nothing noted about you yet.")
    if memories:
        quoted = " ".join(_cut(summary) for summary in memories)
        parts.append(f"From our conversations I remember: {quoted}")
    return " ".join(parts)


def _cut(summary: str) -> str:
    flat = " ".join(summary.split())
    if len(flat) <= MEMORY_CHARS:
        return flat
    return flat[:MEMORY_CHARS].rsplit(" ", 1)[0] + " ..."
