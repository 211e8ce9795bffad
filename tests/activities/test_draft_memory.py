"""Drafts this process wrote are read back from memory; the rest from PostgreSQL."""

from __future__ import annotations

import pytest

from activities import drafts
from activities.recent import DRAFTS
from schemas.ids import new_ulid
from store.db import Database


class Unreachable(Database):
    """A database nobody may ask: a read from memory must not touch it."""

    def __init__(self) -> None:
        pass

    def autocommit(self):  # type: ignore[no-untyped-def]
        raise AssertionError("the draft was read from the database")


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
