"""Recall over levels: a match is shown through the highest recollection that holds it.

Folding leaves every level in place, so a search finds records of any level. A strong match
is a detail worth its own line and is shown as itself; any other match is shown through the
highest live recollection folded above it (the record stays reachable by drilling down). A
recollection takes the place of its best-ranked match, carries that match's score and lists
every match it stands for (``matched``), so many moderate matches of one stretch cost one
line, and a tight budget keeps the broad recollection rather than one of its details.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from schemas.memory import ScoreBand
from schemas.recall import RetrievedMemory


def to_lift(records: Sequence[RetrievedMemory], folded: Mapping[str, bool]) -> list[str]:
    """IDs of the records to show through a recollection: folded, and not a strong match."""
    return [r.id for r in records if folded.get(r.id) and r.band is not ScoreBand.STRONG]


def lift(
    records: Sequence[RetrievedMemory], tops: Mapping[str, RetrievedMemory]
) -> list[RetrievedMemory]:
    """``records`` (best first) with each record in ``tops`` replaced by its recollection.

    ``tops`` maps a record's ID to the highest recollection above it. Each line appears once,
    where its best match ranked; a recollection that was also found in its own right keeps
    its own score if that is better.
    """
    shown: dict[str, RetrievedMemory] = {}
    matched: dict[str, list[str]] = {}
    for record in records:
        top = tops.get(record.id)
        if top is None:
            shown.setdefault(record.id, record)
            continue
        matched.setdefault(top.id, []).append(record.id)
        if top.id not in shown:
            shown[top.id] = top.model_copy(
                update={"score": record.score, "band": record.band, "signals": record.signals}
            )
    return [
        line.model_copy(update={"matched": matched[line.id]}) if line.id in matched else line
        for line in shown.values()
    ]
