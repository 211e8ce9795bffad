"""The date/time line: current time in friendly words, with the natural part of day."""

from __future__ import annotations

from datetime import datetime
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError


def part_of_day(hour: int) -> str:
    """Morning (5-11), afternoon (12-16), evening (17-20) or night (21-4)."""
    if 5 <= hour < 12:
        return "morning"
    if 12 <= hour < 17:
        return "afternoon"
    if 17 <= hour < 21:
        return "evening"
    return "night"


def friendly_now(now: datetime, timezone: str = "UTC") -> str:
    """The date/time line in friendly words.

    For example ``It is Monday, 30 November 2026, 4:27 in the morning (UTC).``
    """
    try:
        zone = ZoneInfo(timezone)
    except (ZoneInfoNotFoundError, ValueError):
        zone, timezone = ZoneInfo("UTC"), "UTC"
    local = now.astimezone(zone)
    hour12 = local.hour % 12 or 12
    part = part_of_day(local.hour)
    when = "at night" if part == "night" else f"in the {part}"
    return (
        f"It is {local:%A}, {local.day} {local:%B %Y}, {hour12}:{local.minute:02d} {when} "
        f"({timezone})."
    )
