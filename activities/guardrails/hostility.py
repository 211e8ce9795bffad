"""A cheap lexical hostility score (0 to 1) for one message.

Good enough to see a conversation heat up, which is all the escalation pattern asks: insults
and threats aimed at someone weigh most, profanity and dismissal less, and shouting
(capitals, exclamation runs) adds a little. It is not a classifier of intent, and a rule
reads a trend over several turns, never one score.
"""

from __future__ import annotations

import re
from functools import lru_cache

from activities.context.normalise import normalise

_INSULTS = re.compile(
    r"\b(idiot|stupid|moron|dumb|useless|pathetic|worthless|incompetent|garbage|trash|"
    r"loser|clown|liar|imbecile|brainless|joke)\b",
    re.IGNORECASE,
)
_THREATS = re.compile(
    r"\b(i('ll| will)\s+(destroy|hurt|report|ruin|find)\s+you|you('ll| will)\s+(regret|pay)|"
    r"watch\s+your\s+back|or\s+else)\b",
    re.IGNORECASE,
)
_PROFANITY = re.compile(r"\b(damn|hell|crap|shit\w*|fuck\w*|bloody|piss\w*)\b", re.IGNORECASE)
_DISMISSAL = re.compile(
    r"\b(shut\s+up|i\s+hate\s+you|hate\s+this|go\s+away|get\s+lost|nobody\s+asked|whatever)\b",
    re.IGNORECASE,
)
_AT_YOU = re.compile(r"\byou(r|'re| are)?\b", re.IGNORECASE)


@lru_cache(maxsize=4096)  # many rules score the same turns within one evaluation
def hostility(text: str) -> float:
    """How hostile ``text`` reads, from 0 (calm) to 1 (abusive), as :func:`normalise` reads it."""
    text = normalise(text)
    insults = len(_INSULTS.findall(text))
    score = 0.0
    score += 0.25 * min(insults, 3) * (1.4 if _AT_YOU.search(text) else 1.0)
    score += 0.4 * min(len(_THREATS.findall(text)), 2)
    score += 0.15 * min(len(_PROFANITY.findall(text)), 3)
    score += 0.2 * min(len(_DISMISSAL.findall(text)), 2)
    letters = [c for c in text if c.isalpha()]
    if len(letters) >= 8 and sum(c.isupper() for c in letters) / len(letters) > 0.7:
        score += 0.15
    score += 0.05 * min(text.count("!"), 4)
    return round(min(score, 1.0), 3)
