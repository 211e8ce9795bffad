"""A reminder asked for in words: "remind me to call mum in 10 minutes", read without a model.

On a plan that offers the model no tools (the built-in tiny model), "remind me ..." would get a
fluent promise and no reminder. The platform recognises the request itself and sets the
reminder for the person who asked, on the channel they asked in (``activities.admission``).
The reader is deliberately narrow: a request that starts a sentence ("remind me", "please
remind me", "can you remind me", "set a reminder"), one thing to be reminded of, and one time
it can read exactly:

- a delay: "in 10 minutes", "in an hour", "in half an hour", "in 2 days", "in a few minutes"
  (5), "in a couple of hours" (2), "in a moment" (a minute);
- a clock time, today or the next day it comes round: "at 5pm", "at 17:30", "at 9 tomorrow";
- "tomorrow" alone (9:00 in the agent's time zone).

Anything else ("remind me later", "remind me what we said") is left to the model.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime, time, timedelta
from zoneinfo import ZoneInfo

MORNING = time(9, 0)
"""When "tomorrow" without a time fires, in the agent's time zone."""

_NUMBERS = {
    "a": 1,
    "an": 1,
    "one": 1,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "ten": 10,
    "fifteen": 15,
    "twenty": 20,
    "thirty": 30,
    "forty-five": 45,
    "a couple of": 2,
    "a few": 5,
}
_UNITS = {"sec": 1, "min": 60, "hour": 3600, "hr": 3600, "day": 86400, "week": 604800}

_ASK = re.compile(
    r"^(?:(?:hi|hey|ok|okay|so|and|also)\b[,!]?\s*)?(?:please\s+)?"
    r"(?:(?:can|could|would|will)\s+you\s+(?:please\s+)?)?"
    r"(?:remind\s+me|set\s+(?:me\s+)?a\s+reminder)\b\s*(?P<rest>.*)$",
    re.IGNORECASE | re.DOTALL,
)
_DELAY = (
    r"in\s+(?:(?P<half>half\s+an?\s+hour)|(?P<moment>a\s+(?:moment|sec(?:ond)?|bit))|(?P<n>\d{1,4}|"
    + "|".join(sorted(_NUMBERS, key=len, reverse=True))
    + r")\s*(?P<unit>sec(?:ond)?s?|min(?:ute)?s?|hours?|hrs?|days?|weeks?))"
)
_CLOCK = (
    r"(?:(?P<day1>today|tonight|tomorrow)\s+)?at\s+(?P<h>\d{1,2})(?::(?P<m>\d{2}))?"
    r"(?:\s*(?P<ampm>[ap]\.?m\.?))?(?:\s+(?P<day2>today|tonight|tomorrow))?"
)
_TOMORROW = r"(?P<alone>tomorrow)(?:\s+morning)?"
_WHEN = re.compile(rf"(?:{_DELAY}|{_CLOCK}|{_TOMORROW})", re.IGNORECASE)
_LEAD = re.compile(r"^(?:to|about|that|of|for)\s+", re.IGNORECASE)
_VAGUE = frozenset(
    ["it", "this", "that", "these", "those", "them", "something", "everything", "later", "soon"]
)


@dataclass(frozen=True)
class AskedReminder:
    """What to be reminded of, in the person's words, and when."""

    objective: str
    at: datetime
    when_said: str
    """The time as they said it ("in 10 minutes"), for the reply that confirms it."""


def asked_reminder(text: str, *, now: datetime, timezone: str) -> AskedReminder | None:
    """The reminder ``text`` asks for, or ``None`` when it asks for none this reader can read.

    ``now`` must be aware; clock times are read in ``timezone`` (an IANA name).
    """
    line = " ".join(text.split())
    ask = _ASK.match(line)
    if ask is None:
        return None
    rest = ask.group("rest").strip().rstrip("?!. ")
    if rest.lower().startswith(("for ", "to ")) and _WHEN.match(rest.split(" ", 1)[1]):
        rest = rest.split(" ", 1)[1]  # "set a reminder for in 10 minutes to ..."
    found = _when_at_an_edge(rest)
    if found is None:
        return None
    match, objective = found
    objective = _LEAD.sub("", objective.strip(" ,;:-")).strip(" ,;:-")
    words = re.findall(r"[\w']+", objective.lower())
    if not words or all(word in _VAGUE for word in words):
        return None
    at = _resolve(match, now=now, zone=ZoneInfo(timezone))
    if at is None:
        return None
    return AskedReminder(objective=objective, at=at, when_said=match.group(0))


def _when_at_an_edge(rest: str) -> tuple[re.Match[str], str] | None:
    """The time phrase at the start or the end of ``rest``, and what is left of it."""
    start = _WHEN.match(rest)
    if start is not None and start.end() < len(rest) and rest[start.end()] in " ,":
        return start, rest[start.end() :]
    for match in _WHEN.finditer(rest):
        if match.end() == len(rest) and match.start() > 0 and rest[match.start() - 1] == " ":
            return match, rest[: match.start()]
    return None


def _resolve(match: re.Match[str], *, now: datetime, zone: ZoneInfo) -> datetime | None:
    """The moment a matched time phrase names, or ``None`` when it names none (25:00)."""
    if match.group("half"):
        return now + timedelta(minutes=30)
    if match.group("moment"):
        return now + timedelta(minutes=1)
    if match.group("n"):
        count = " ".join(match.group("n").lower().split())
        amount = int(count) if count.isdigit() else _NUMBERS[count]
        unit = next(v for k, v in _UNITS.items() if match.group("unit").lower().startswith(k))
        return now + timedelta(seconds=amount * unit) if amount else None
    local = now.astimezone(zone)
    if match.group("alone"):
        return datetime.combine(local.date() + timedelta(days=1), MORNING, zone)
    hour, minute = int(match.group("h")), int(match.group("m") or 0)
    ampm = (match.group("ampm") or "").lower().replace(".", "")
    if ampm:
        if not 1 <= hour <= 12:
            return None
        hour = hour % 12 + (12 if ampm == "pm" else 0)
    if hour > 23 or minute > 59:
        return None
    day = (match.group("day1") or match.group("day2") or "").lower()
    if day == "tonight" and not ampm and hour < 12:
        hour += 12
    at = datetime.combine(local.date(), time(hour, minute), zone)
    if day == "tomorrow" or (not day and at <= local):
        at += timedelta(days=1)
    return at
