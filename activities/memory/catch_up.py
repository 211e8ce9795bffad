"""'What have we been up to?' answered from the highest recollections, on plans that confirm.

The question asks for the shape of a stretch, which is what folding keeps (docs/memory.md,
Levels): the agent's recollections of the conversations it had with the person on this channel,
each at the highest level it has reached, oldest first, and the newest memories not folded yet.
On a plan that confirms without the model (the tiny one, which ignores its memory block when
asked this), the reply ends with them; a plan with a capable model reads the same recollections
in its memory block.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from schemas.memory import MemoryRecordPublic

_ASKS = re.compile(
    r"\bwhat\s+(?:have|had)\s+we\s+been\s+(?:up\s+to|doing|talking\s+about)"
    r"|\bwhat\s+(?:did|have)\s+we\s+(?:do(?:ne)?|talk(?:ed)?\s+about)\s+"
    r"(?:lately|recently|so\s+far|this\s+(?:week|month|year)|last\s+(?:week|month))"
    r"|\bcatch\s+me\s+up\b"
    r"|\bremind\s+me\s+what\s+we(?:'ve|\s+have)?\s+(?:talked\s+about|done|did|been\s+up\s+to)",
    re.IGNORECASE,
)

NOTHING_YET = (
    "I have no memories of our conversations here yet: each becomes one after it closes, "
    "and they fold into longer recollections as they add up."
)
RECOLLECTION_CHARS = 480
MEMORY_CHARS = 240


def asks_what_we_did(text: str) -> bool:
    """Whether ``text`` asks what the agent and the person have been up to."""
    return _ASKS.search(text) is not None


NEWER_MEMORIES = 2
"""Memories not folded yet, newer than every recollection told, told after them."""


def stretches(tops: Sequence[MemoryRecordPublic], *, most: int) -> list[MemoryRecordPublic]:
    """Of ``tops`` (newest first), the newest ``most`` recollections and the memories after them.

    A month is its recollections; the days since the last one folded are told as they are.
    """
    folded = [record for record in tops if record.level > 1][:most]
    since = max((record.id for record in folded), default="")
    newer = [record for record in tops if record.level == 1 and record.id > since]
    return [*folded, *newer[:NEWER_MEMORIES]]


def what_we_did(tops: Sequence[MemoryRecordPublic]) -> str:
    """``tops`` (records folded into nothing, any order) told oldest first in one paragraph."""
    if not tops:
        return NOTHING_YET
    told = sorted(tops, key=lambda record: record.id)  # IDs sort like experiences
    parts = [_cut(r.summary, RECOLLECTION_CHARS if r.level > 1 else MEMORY_CHARS) for r in told]
    return "Looking back over our conversations here: " + " ".join(parts)


def _cut(summary: str, most: int) -> str:
    flat = " ".join(summary.split())
    if len(flat) <= most:
        return flat
    return flat[:most].rsplit(" ", 1)[0] + " ..."
