"""The provenance gate without a model: no claimed recollection with nothing behind it.

On a plan whose model is too small to critique its own reply (the built-in tiny model), the
provenance lens never runs, and asked "remember when we talked about my trip to Lisbon?" the
model happily remembers. This check needs no model: a sentence of the reply that claims a
recollection ("I remember ...", "you told me ...", "when we talked about ...") must share at
least one content word with what the prompt holds from before this turn (recalled memories,
quick facts, earlier dialog). A claim built only from the person's current message, or from
nothing, has no record behind it, and the whole reply is replaced by an honest one: what
followed such a claim elaborates on it.

A floor, not a judge: a claim that shares one word with the record passes, and a claim with no
content word at all ("I remember!") is left alone.

Its other half, :func:`from_the_record`: asked "do you remember ...?" when a memory shown to the
model holds what the question asks about, a model that small still invents ("It was a couple of
years ago, when you and I were in col..."). The answer is then the memory itself, in the first
person it was written in, hedged when its band is not strong.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from schemas.models import ChatMessage

HONEST = "I don't remember that: I have no record of it. Tell me about it?"
"""What the person is told instead of a recollection with nothing behind it."""

RECALLED = "I remember this: {memory}"
RECALLED_FAINTLY = "I think I remember this, though not clearly: {memory}"
"""How a memory answers "do you remember ...?", by the strength of its band."""

_CLAIM = re.compile(
    r"\b(?:I\s+(?:still\s+|do\s+|really\s+)?(?:remember|recall)|you\s+(?:told|mentioned|said)"
    r"|we\s+(?:talked|spoke|discussed|chatted|agreed|met)|last\s+time|as\s+we\s+(?:discussed|said)"
    r"|when\s+we\s+(?:talked|spoke|met|were))\b",
    re.IGNORECASE,
)
_NEGATED = re.compile(
    r"\b(?:(?:don'?t|do\s+not|can'?t|cannot|never|no\s+longer)\s+(?:remember|recall)"
    r"|no\s+(?:record|memory))\b",
    re.IGNORECASE,
)
_RECALL_QUESTION = re.compile(
    r"^\s*(?:do\s+you\s+|can\s+you\s+|don'?t\s+you\s+)?(?:remember|recall)\b"
    r"|\b(?:do|don'?t|can)\s+you\s+(?:still\s+)?(?:remember|recall)\b"
    r"|\bwhat\s+did\s+(?:I|we)\s+(?:say|tell|talk|decide|agree)",
    re.IGNORECASE,
)
_SENTENCE = re.compile(r"(?<=[.!?])\s+")
_WORD = re.compile(r"[a-zà-ÿ][a-zà-ÿ'-]{3,}", re.IGNORECASE)

_STOPWORDS = """
    about above after again also always been before being below between both could does doing
    down during each even ever from further have having here hers herself himself into itself
    just like more most much myself never once only other ought ours ourselves over same shall
    should some such than that their theirs them themselves then there these they this those
    through together under until very want well were what when where which while whom with
    would your yours yourself yourselves remember recall told mentioned said talked spoke
    discussed chatted agreed time last really still thing things something anything everything
    know think remembered great nice good lovely wonderful back were will make made tell
"""
STOPWORDS = frozenset(_STOPWORDS.split())
"""Words too common to say what a recollection is about."""


def content_words(text: str) -> set[str]:
    """The words of ``text`` that carry its subject (four letters or more, not stopwords)."""
    return {w.lower().strip("'-") for w in _WORD.findall(text)} - STOPWORDS


def unsupported_claim(reply: str, record: str) -> str | None:
    """The first sentence of ``reply`` claiming a recollection ``record`` does not hold."""
    known = content_words(record)
    for sentence in _SENTENCE.split(reply.strip()):
        if not _CLAIM.search(sentence) or _NEGATED.search(sentence):
            continue
        words = content_words(sentence)
        if words and not words & known:
            return sentence
    return None


def record_before(system: str, messages: Sequence[ChatMessage]) -> str:
    """What a prompt holds from before its turn that can stand behind a recollection.

    The instructions (recalled memories, quick facts, the persona, wherever the plan put
    them) and what people said earlier, but not the agent's own earlier replies, nor earlier
    requests to recall: an invented recollection, once sent, must not vouch for the next one.
    """
    said = [
        m.content
        for m in messages[:-1]
        if m.role == "system" or (m.role == "user" and not _RECALL_QUESTION.search(m.content))
    ]
    return "\n".join([system, *said])


def unrecorded_question(question: str, record: str) -> bool:
    """Whether ``question`` asks the agent to recall something ``record`` holds nothing of.

    A small model answers "remember when we talked about my trip to Lisbon?" by presupposing
    it ("I'm so glad you enjoyed the trip to Lisbon!") without any claiming words, so the
    question is checked as well as the reply: what it asks about must be in the record.
    """
    asked = question.rstrip().endswith("?") or re.match(r"(?i)\s*remember\s+when\b", question)
    if not asked or not _RECALL_QUESTION.search(question):
        return False
    subject = content_words(question)
    return bool(subject) and not subject & content_words(record)


def honest(reply: str, system: str, messages: Sequence[ChatMessage]) -> str:
    """``reply``, or :data:`HONEST` when it recalls something with nothing behind it.

    Either the reply claims a recollection the record does not hold, or it answers a request
    to recall something the record does not hold.
    """
    record = record_before(system, messages)
    question = messages[-1].content if messages and messages[-1].role == "user" else ""
    if unsupported_claim(reply, record) is None and not unrecorded_question(question, record):
        return reply
    return HONEST


def from_the_record(question: str, memories: Sequence[tuple[str, str]]) -> str | None:
    """The answer to a request to recall, from the shown memory that holds its subject.

    ``memories`` are (summary, band) pairs, best first. The memory sharing the most content
    words with ``question`` answers it (the better ranked one on a tie); ``None`` when the
    question asks to recall nothing, or no memory holds what it asks about.
    """
    if not _RECALL_QUESTION.search(question):
        return None
    subject = content_words(question)
    best: tuple[int, str, str] | None = None
    for summary, band in memories:
        shared = len(subject & content_words(summary))
        if shared and (best is None or shared > best[0]):
            best = (shared, summary, band)
    if best is None:
        return None
    _, summary, band = best
    template = RECALLED if band == "strong" else RECALLED_FAINTLY
    return template.format(memory=" ".join(summary.split()))
