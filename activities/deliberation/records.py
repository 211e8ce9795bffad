"""The retrieved records a prompt actually showed the model, as the critic and refiner see them.

The memory source stores what it surfaced in the prompt's ``extra["memory"]`` (record ID,
summary, score band and score). Only records whose summary is in the stored system text count:
if assembly trimmed a block after the source described it, the critic must not be told the
model saw a record it never did.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from activities.deliberation.calls import clip

log = logging.getLogger(__name__)

MEMORY_SOURCE = "memory"
"""The context source whose ``extra`` lists the surfaced records."""

SUMMARY_CHARS = 600
"""Longest summary shown to a critic; enough to judge a claim against."""


@dataclass(frozen=True)
class ShownRecord:
    """One retrieved record as it was in context."""

    id: str
    summary: str
    band: str
    score: float | None

    def render(self) -> str:
        """One line for a critic or refiner prompt."""
        score = f", {self.score:.2f}" if self.score is not None else ""
        return f"- [{self.id}] ({self.band}{score}) {clip(self.summary, SUMMARY_CHARS)}"


def _squash(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip().lower()


def _parse(item: Any) -> ShownRecord | None:
    if not isinstance(item, Mapping):
        return None
    record_id, summary = item.get("id"), item.get("summary")
    if not isinstance(record_id, str) or not isinstance(summary, str) or not summary.strip():
        return None
    score = item.get("score")
    return ShownRecord(
        id=record_id,
        summary=summary,
        band=str(item.get("band") or "unscored"),
        score=float(score) if isinstance(score, int | float) else None,
    )


def records_in_context(extra: Mapping[str, Any] | None, system: str) -> list[ShownRecord]:
    """The records ``extra`` says were surfaced and the system text really contains."""
    memory = (extra or {}).get(MEMORY_SOURCE)
    items = memory.get("records") if isinstance(memory, Mapping) else memory
    if not isinstance(items, list):
        return []
    listed = [record for record in map(_parse, items) if record is not None]
    shown_text = _squash(system)
    shown = [r for r in listed if _squash(r.summary)[:120] in shown_text]
    if listed and not shown:
        # Nothing matched at all: the source renders summaries differently (escaped, reworded),
        # so the text check cannot tell; trust the source's own list rather than show none.
        log.warning("no surfaced record summary found verbatim in the prompt; using the list")
        return listed
    return shown


def render_records(records: list[ShownRecord]) -> str:
    """The records block of a critic or refiner prompt."""
    if not records:
        return (
            "(none: no memory was retrieved for this reply, so every claim about past events, "
            "people or commitments is unsupported unless this conversation establishes it)"
        )
    return "\n".join(record.render() for record in records)
