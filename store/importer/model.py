"""Parsed dialog, before it is stored: what every source format is turned into."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from schemas.events import ChannelRef


class ImportInputError(ValueError):
    """A file that cannot be imported; one line naming the line (or item) to fix."""


MAX_FILE_BYTES = 256 * 1024 * 1024
"""Largest file imported at once (it is validated whole before anything is written)."""

MAX_LINE_BYTES = 1024 * 1024
"""Longest JSONL line: a turn of the maximum message size with room for its fields."""


@dataclass
class SourceTurn:
    """One utterance as the file gave it."""

    where: str
    """Line number or path in the file, for error messages."""
    speaker_id: str
    speaker_name: str
    role: str
    text: str
    at: datetime
    tags: list[str] = field(default_factory=list)
    key: str | None = None


@dataclass
class SourceConversation:
    """The turns of one conversation, in file order."""

    key: str
    channel: ChannelRef
    turns: list[SourceTurn] = field(default_factory=list)


def check_size(size: int, name: str) -> None:
    """Refuse files too large to validate in memory.

    Raises:
        ImportInputError: The file is larger than :data:`MAX_FILE_BYTES`.
    """
    if size > MAX_FILE_BYTES:
        raise ImportInputError(
            f"{name} is {size / 2**20:,.0f} MiB; the limit is {MAX_FILE_BYTES // 2**20} MiB: "
            "split it into several files"
        )


MAX_SAME_INSTANT = 0xFFFF
"""Turns of one conversation that may share a millisecond (their order fills 16 ID bits)."""


def check_conversations(conversations: list[SourceConversation]) -> None:
    """What no single line shows: repeated turn keys, too many turns at one instant.

    Raises:
        ImportInputError: The first such problem, naming its line.
    """
    for conversation in conversations:
        keys: dict[str, str] = {}
        instants: dict[int, int] = {}
        for turn in conversation.turns:
            if turn.key is not None:
                if turn.key in keys:
                    raise ImportInputError(
                        f"{turn.where}: key {turn.key!r} repeats {keys[turn.key]} "
                        "in one conversation"
                    )
                keys[turn.key] = turn.where
            millis = int(turn.at.timestamp() * 1000)
            instants[millis] = instants.get(millis, 0) + 1
            if instants[millis] > MAX_SAME_INSTANT + 1:
                raise ImportInputError(f"{turn.where}: too many turns at the same millisecond")
