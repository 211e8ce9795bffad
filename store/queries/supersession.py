"""Which facts a memory holds were replaced since: the supersession the recall block marks.

A fact learned from a stretch of dialog (an observation, with the turns it came from) belongs
to every memory whose turns hold that stretch. When a later fact supersedes it, the memory
still says the old thing: recall marks it with what the fact is now. Only facts about the
people present and the agent itself are read, as the observations source reads them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import LiteralString

from store.lane import Lane


@dataclass(frozen=True)
class Span:
    """A memory's turns: ``first`` through ``last`` (turn ULIDs sort by time)."""

    memory_id: str
    first: str
    last: str


@dataclass(frozen=True)
class Replaced:
    """A fact a memory holds, and the fact that replaced it."""

    memory_id: str
    type: str
    was: str
    now: str


_REPLACED: LiteralString = """
    SELECT s.memory_id, o.type, o.value AS was, n.value AS now
      FROM unnest(CAST(%(ids)s AS varchar[]), CAST(%(firsts)s AS varchar[]),
                  CAST(%(lasts)s AS varchar[])) AS s(memory_id, first, last)
      JOIN observations AS o ON o.agent = %(agent)s AND o.status = 'superseded'
       AND o.turn_first >= s.first AND o.turn_last <= s.last
       AND (o.person_id IS NULL OR o.person_id = ANY(CAST(%(present)s AS varchar[])))
      JOIN observations AS n ON n.agent = o.agent AND n.supersedes = o.id
     ORDER BY o.observed_at, o.id
"""


async def replaced_facts(
    lane: Lane, *, agent: str, spans: Sequence[Span], present: Sequence[str]
) -> list[Replaced]:
    """The superseded facts learned inside each span, with their successors; oldest first.

    One statement on the driver lane: a recall that surfaces memories with turns asks it.
    """
    if not spans:
        return []
    rows = await lane.rows(
        _REPLACED,
        {
            "agent": agent,
            "ids": [s.memory_id for s in spans],
            "firsts": [s.first for s in spans],
            "lasts": [s.last for s in spans],
            "present": list(present),
        },
    )
    return [Replaced(r["memory_id"], r["type"], r["was"], r["now"]) for r in rows]
