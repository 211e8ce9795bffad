"""Recall as one coherent block, without a model: duplicates folded, replaced facts marked.

Memories formed from overlapping stretches, or re-formed, can say nearly the same thing twice;
the lower-ranked of two whose words overlap by ``DUPLICATE`` or more is left out, so the budget
goes to something new. A memory that holds a fact replaced since (an observation learned in its
turns and superseded later) is not shown as equal to the newer record: its line says what the
fact is now (``store.queries.supersession``).
"""

from __future__ import annotations

from collections.abc import Sequence

from schemas.recall import RetrievedMemory
from schemas.text import word_similarity
from store.queries.supersession import Replaced

DUPLICATE = 0.8
"""Word overlap (Jaccard) from which two memories say the same thing."""


def deduplicated(records: Sequence[RetrievedMemory]) -> list[RetrievedMemory]:
    """``records`` (best first) without those that repeat a better-ranked one."""
    kept: list[RetrievedMemory] = []
    for record in records:
        if all(word_similarity(record.summary, k.summary) < DUPLICATE for k in kept):
            kept.append(record)
    return kept


def marked(
    records: Sequence[RetrievedMemory], replaced: Sequence[Replaced]
) -> list[RetrievedMemory]:
    """``records`` with each replaced fact they hold said on their line."""
    changes: dict[str, list[str]] = {}
    for fact in replaced:
        label = fact.type.replace("_", " ")
        changes.setdefault(fact.memory_id, []).append(
            f'{label} is now "{fact.now}" (was "{fact.was}")'
        )
    return [
        r.model_copy(update={"superseded": changes[r.id]}) if r.id in changes else r
        for r in records
    ]
