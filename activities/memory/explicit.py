"""An explicit "please remember ..." kept at once, as a quick fact about the person who said it.

Memories form when a conversation closes, so a new user who says "please remember I prefer
tea" and asks the next day found nothing (and on the tiny model, whose formation often fails,
nothing ever). The platform recognises the request itself, on every plan, and keeps the
sentence in the person's words as a quick fact about them: it reaches the prompt of this very
turn and of every later one (the quick-facts block, fenced as the person's text), and survives
any restart. The recogniser is deliberately narrow: an imperative "remember" or "don't forget"
that states something, never a question ("remember when we talked about Lisbon?", "do you
remember ...") and never a recollection the person asks the agent to produce.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable
from datetime import datetime

from schemas.text import InvalidTextError, clean_text
from store.db import Database
from store.queries.goals import count_facts, put_fact

KEY = "asked me to remember ({digest})"
"""Quick-fact key of a kept request; the digest keeps two requests apart, never shown."""

_KEPT = re.compile("^" + re.escape(KEY).replace(re.escape("{digest}"), "[0-9a-f]+") + "$")


def is_kept_request(key: str) -> bool:
    """Whether a quick fact's ``key`` is that of something a person asked to be remembered."""
    return _KEPT.match(key) is not None


VALUE_CHARS = 500

_POINTERS = frozenset(
    [
        "these",
        "this",
        "that",
        "those",
        "it",
        "them",
        "everything",
        "all",
        "of",
        "for",
        "me",
        "us",
        "please",
        "thanks",
        "thank",
        "you",
        "ok",
        "okay",
        "now",
        "later",
        "too",
        "as",
        "well",
        "the",
        "above",
        "what",
        "i",
        "said",
    ]
)
"""Words that point at something said elsewhere: "remember these", "note all of that for me"
state nothing to keep, so a "fact" made only of them is not one."""

_REQUEST = re.compile(
    r"(?:^|[.!;]\s+|,\s*|\b(?:and|also|ok|okay|so)\s+)"
    r"(?:please\s+)?(?:remember|don'?t\s+forget|do\s+not\s+forget|note)\b(?:\s*,)?"
    r"(?:\s+(?:that|this))?\s*[:,]?\s+"
    r"(?!(?:when|what|how|if|whether|where|who|why|to|the\s+time|our|we|you)\b)"
    r"(?P<fact>[^?\n]{3,500}?)\s*[.!]*\s*$",
    re.IGNORECASE,
)


def requested_fact(text: str) -> str | None:
    """The fact a message asks the agent to remember, in the person's words, or ``None``."""
    stripped = text.strip()
    if not stripped or stripped.endswith("?"):
        return None
    match = _REQUEST.search(stripped)
    if match is None:
        return None
    fact = match.group("fact").strip()
    words = re.findall(r"[\w']+", fact.lower())
    if not words or all(word in _POINTERS for word in words):
        return None
    return fact[0].upper() + fact[1:]


ASKED_IMPORTANCE = 8
"""The least importance of a memory of a stretch in which someone asked to be remembered: well
above the cull threshold, whatever the rater made of it (a tiny model rated such a stretch 1)."""


def asked_to_remember(texts: Iterable[str]) -> list[str]:
    """The facts ``texts`` (what people said) ask the agent to remember, in order."""
    return [fact for text in texts if (fact := requested_fact(text)) is not None]


def fact_key(fact: str) -> str:
    """The key a kept request is stored under: the same request made twice is one fact."""
    words = " ".join(re.sub(r"[^\w\s]", "", fact.lower()).split())
    return KEY.format(digest=hashlib.sha256(words.encode()).hexdigest()[:6])


async def keep_requested_fact(
    db: Database, *, agent: str, person_id: str, text: str, at: datetime, limit: int
) -> str | None:
    """Keep what ``text`` asks to be remembered; returns the fact kept, or ``None``.

    Nothing is kept when the person already has ``limit`` facts (the agent's own tool says so
    to the model; here the turn goes on as any other).
    """
    fact = requested_fact(text)
    if fact is None:
        return None
    try:
        value = clean_text(fact, what="fact", max_chars=VALUE_CHARS)
    except InvalidTextError:
        return None
    key = fact_key(value)
    async with db.session() as session:
        if await count_facts(session, agent=agent, subject=person_id) >= limit:
            return None
        await put_fact(session, agent=agent, subject=person_id, key=key, value=value, at=at)
    return value
