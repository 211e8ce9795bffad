"""What this worker wrote a moment ago and will read back in a moment: kept in memory.

A reply's prompt is stored by admission and read by the model call; its draft is stored by
the model call and read by the review and the send. Each is written once under a fresh ID and
never changed, so the worker that wrote it can answer those reads itself instead of asking
PostgreSQL. A read in another worker (or after a restart) still goes to the database: this is
a shortcut, never the record. Bounded: the newest entries only.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Generic, TypeVar

from store.tables import PromptRow

V = TypeVar("V")


class Recent(Generic[V]):
    """The newest ``size`` values written under fresh, never-reused IDs."""

    def __init__(self, size: int) -> None:
        self.size = size
        self._values: OrderedDict[str, V] = OrderedDict()

    def keep(self, key: str, value: V) -> None:
        """Keep ``value``, written just now under ``key``; the oldest goes past ``size``."""
        self._values[key] = value
        self._values.move_to_end(key)
        while len(self._values) > self.size:
            self._values.popitem(last=False)

    def get(self, key: str) -> V | None:
        """The value kept under ``key``, if this process wrote it recently."""
        return self._values.get(key)


DRAFTS: Recent[str] = Recent(256)
"""Reply drafts' texts (a few hundred kilobytes at most)."""

PROMPTS: Recent[PromptRow] = Recent(64)
"""Assembled prompts (tens of kilobytes each: a 40-turn window and its context)."""
