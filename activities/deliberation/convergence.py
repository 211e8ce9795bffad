"""The right to silence between agents: a reply that only agrees or restates is not sent.

Two agents that answer every message would talk forever; the exchange should end where a
person would stop, once nothing new is being said. This is a cheap, deterministic screen (no
model): the candidate is compared with the message it answers by its content words. It adds
nothing when, with agreement phrases and filler removed, too few of its content words are
new. Silence is then the natural end of a converged conversation; the channel's token budget
stays the hard bound when replies keep adding words but never stop.
"""

from __future__ import annotations

import re

MIN_NEW_WORDS = 3
"""Fewer new content words than this and the reply adds nothing."""

MIN_NEW_SHARE = 0.34
"""Nor does a reply whose new content words are less than this share of its own."""

_AGREEMENT = re.compile(
    r"\b(i (fully |completely |totally )?agree|agreed|absolutely|exactly|indeed|precisely|"
    r"(you'?re|you are|that'?s|that is) (so |quite |absolutely )?(right|true|correct)|"
    r"well said|good point|great point|same here|me too|of course|definitely|yes|yeah|sure|"
    r"true|right|thanks|thank you|couldn'?t agree more)\b",
    re.IGNORECASE,
)

_DISAGREEMENT = re.compile(
    r"(?:\bnot|n't|\bnever|\bno\s+longer)\s+(?:so\s+|quite\s+|really\s+)?"
    r"(?:true|right|correct|agree|sure|so)\b|\b(?:I\s+)?disagree\b|\bthat'?s\s+wrong\b",
    re.IGNORECASE,
)
"""A reply that contradicts what it answers has added something, however few its words."""

_WORD = re.compile(r"[a-z0-9']+")

_FILLER_WORDS = """a an the and or but so to of in on at by for with from as is are was were be
been being it its it's this that these those there here i you we they he she me us them my your
our their his her do does did have has had will would can could should shall may might must not
no nor than then too very just also really quite what which who whom whose when where why how
all any both each more most some such only own same again further once about over into out up
down off if because while until agree agreed agreement point points think thought say said well
good great yes yeah sure indeed exactly absolutely right true totally fully completely
definitely course thanks thank let's lets i'm you're we're that's im youre were thats perfectly"""

_FILLER = frozenset(_FILLER_WORDS.split())


def _content(text: str) -> list[str]:
    words = _WORD.findall(text.lower())
    return [w.strip("'") for w in words if w.strip("'") and w.strip("'") not in _FILLER]


def _stem(word: str) -> str:
    # Crude, but enough that "plants" restates "plant" and "watering" restates "water".
    for suffix in ("ing", "ed", "es", "s"):
        if len(word) > len(suffix) + 2 and word.endswith(suffix):
            return word[: -len(suffix)]
    return word


def adds_nothing(candidate: str, answered: str) -> str | None:
    """Why ``candidate`` adds nothing to ``answered`` (the reason stated), or ``None``.

    Args:
        candidate: The reply the agent would send.
        answered: The message it answers.
    """
    if _DISAGREEMENT.search(candidate):
        return None
    words = [_stem(w) for w in _content(candidate)]
    seen = {_stem(w) for w in _content(answered)}
    new = [w for w in words if w not in seen]
    agrees = bool(_AGREEMENT.search(candidate))
    if len(new) >= MIN_NEW_WORDS and len(new) >= MIN_NEW_SHARE * len(words):
        return None
    if agrees:
        return "It only agrees with what was said; silence ends a conversation that has converged."
    return "It only restates what was said; silence ends a conversation that has converged."
