"""The date/time line: current time in friendly words, with the natural part of day."""

from __future__ import annotations

import re
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


_ASKS_THE_TIME = re.compile(
    r"^(?:(?:hi|hey|ok|okay|so|and|also|sorry|excuse\s+me)\b[,!]?\s*)?(?:please\s+)?"
    r"(?:(?:what|wh?at'?s)\s+(?:is\s+)?(?:the\s+)?(?:time|date|day)(?:\s+(?:is\s+it|it\s+is))?"
    r"(?:\s+(?:now|right\s+now|today|there|where\s+you\s+are))?"
    r"|what\s+time\s+is\s+it(?:\s+(?:now|right\s+now|there|where\s+you\s+are))?"
    r"|what\s+(?:day|date)\s+is\s+(?:it|today)(?:\s+today)?"
    r"|(?:do|can|could)\s+you\s+(?:tell\s+me\s+)?(?:know\s+)?(?:tell\s+me\s+)?"
    r"what\s+(?:the\s+)?(?:time|date|day)\s+it\s+is"
    r"|(?:do\s+you\s+(?:know|have)|have\s+you\s+got)\s+the\s+(?:time|date)"
    r"|tell\s+me\s+the\s+(?:time|date))"
    r"\s*(?:,?\s*please)?\s*[?.!]*$",
    re.IGNORECASE,
)


def asks_the_time(text: str) -> bool:
    """Whether ``text`` is nothing but a question for the time or the date ("What time is it?").

    Only the whole message counts: "what time is it in Tokyo?" or "what date is the party?"
    ask something else, and are left to the model.
    """
    return _ASKS_THE_TIME.match(" ".join(text.split())) is not None
