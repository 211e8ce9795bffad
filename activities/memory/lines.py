"""One memory as a line of the memory block: ``[ID | band | date | emotion] summary``."""

from __future__ import annotations

from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from schemas.recall import RetrievedMemory


def zone_of(name: str) -> ZoneInfo:
    """The agent's time zone by name; UTC when the name is unknown."""
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        return ZoneInfo("UTC")


def annotate(memory: RetrievedMemory, zone: ZoneInfo) -> str:
    """One line of the block: ``[ID | band | date | emotion] summary``.

    A recollection says so, with its level and the dates it spans:
    ``[ID | band | 2026-11-02 to 2026-11-20 | recollection, level 2 | emotion]``.
    """
    parts = [memory.id, memory.band.value, f"{memory.created_at.astimezone(zone):%Y-%m-%d}"]
    if memory.level > 1:
        first, last = memory.first_at or memory.created_at, memory.last_at or memory.created_at
        parts[2] = f"{first.astimezone(zone):%Y-%m-%d} to {last.astimezone(zone):%Y-%m-%d}"
        parts.append(f"recollection, level {memory.level}")
    if memory.emotion:
        parts.append(memory.emotion)
    summary = " ".join(memory.summary.split())
    line = f"[{' | '.join(parts)}] {summary}"
    if memory.superseded:
        line += " (since changed: " + "; ".join(memory.superseded) + ")"
    return line
