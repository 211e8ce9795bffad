"""Drafts this process wrote are read back from memory; the rest from PostgreSQL."""

from __future__ import annotations

import pytest

from activities import drafts
from activities.recent import DRAFTS
from schemas.ids import new_ulid
from store.db import Database
from store.lane import Lane, Row


class UnreachableLane(Lane):
    """A lane nobody may ask: a read from memory must not touch it."""

    def __init__(self) -> None:
        pass

    async def rows(self, statement: object, params: object = None) -> list[Row]:
        raise AssertionError("the draft was read from the database")


class Unreachable(Database):
    """A database nobody may ask (drafts are read on its lane)."""

    def __init__(self) -> None:
        self.lane = UnreachableLane()


async def test_a_draft_this_process_wrote_is_read_from_memory() -> None:
    draft_id = new_ulid()
    DRAFTS.keep(draft_id, "the reply")
    assert await drafts.load_draft(Unreachable(), draft_id) == "the reply"


async def test_memory_keeps_only_the_newest_drafts() -> None:
    first = new_ulid()
    DRAFTS.keep(first, "oldest")
    for _ in range(DRAFTS.size):
        DRAFTS.keep(new_ulid(), "newer")
    with pytest.raises(AssertionError, match="read from the database"):
        await drafts.load_draft(Unreachable(), first)
