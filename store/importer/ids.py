"""Deterministic IDs for imported dialog: the same file always yields the same ULIDs.

A ULID's time is the original time, so ID order is chronological; its 80 random bits come from
a hash of where the item came from (agent, channel, conversation key, turn), so a re-import
finds every row already there. Turns sharing one millisecond (LoCoMo dates whole sessions)
keep their file order: their position among those turns fills the top bits.
"""

from __future__ import annotations

import hashlib
from datetime import datetime

from schemas.ids import check_ulid, is_ulid, ulid_from_parts


def _digest(*parts: str, bits: int) -> int:
    joined = "\x1f".join(parts).encode("utf-8")
    return int.from_bytes(hashlib.sha256(joined).digest()[:16], "big") >> (128 - bits)


def conversation_id(*, agent: str, channel_key: str, key: str, first_at: datetime) -> str:
    """The conversation's ULID: ``key`` itself if it is one, else derived from it."""
    if is_ulid(key.strip().upper()):
        return check_ulid(key, what="conversation id")
    return ulid_from_parts(first_at, _digest(agent, channel_key, key, bits=80))


def turn_id(*, agent: str, conversation: str, at: datetime, same_instant: int, source: str) -> str:
    """A turn's ULID.

    Args:
        agent: The importing agent.
        conversation: The turn's conversation ULID.
        at: When the turn was said.
        same_instant: How many earlier turns of the conversation share its millisecond.
        source: What identifies the turn in the file (its key, else speaker and text).
    """
    return ulid_from_parts(at, (same_instant << 64) | _digest(agent, conversation, source, bits=64))
