"""Checking a reminder's timing before Temporal sees it: absolute times, intervals, cron.

A model can ask for anything: a time last year, every second, ``*/0``, the 31st of February.
These checks refuse what is malformed, in the past, too far ahead or too frequent, with a
message the model can act on.
"""

from __future__ import annotations

import itertools
from datetime import datetime, timedelta
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

MAX_EVERY = timedelta(days=366)

_MONTHS = {
    m: i
    for i, m in enumerate(
        ["JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL", "AUG", "SEP", "OCT", "NOV", "DEC"],
        start=1,
    )
}
_DAYS = {d: i for i, d in enumerate(["SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT"])}
_MACROS = {
    "@yearly": "0 0 1 1 *",
    "@annually": "0 0 1 1 *",
    "@monthly": "0 0 1 * *",
    "@weekly": "0 0 * * 0",
    "@daily": "0 0 * * *",
    "@midnight": "0 0 * * *",
    "@hourly": "0 * * * *",
}
# (name, low, high, names)
_FIELDS: tuple[tuple[str, int, int, dict[str, int]], ...] = (
    ("minute", 0, 59, {}),
    ("hour", 0, 23, {}),
    ("day of month", 1, 31, {}),
    ("month", 1, 12, _MONTHS),
    ("day of week", 0, 7, _DAYS),
)


class RecurrenceError(ValueError):
    """A timing that cannot be scheduled; the message says what to change."""


def zone(name: str) -> ZoneInfo:
    """The IANA time zone ``name``.

    Raises:
        RecurrenceError: There is no such zone.
    """
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        raise RecurrenceError(
            f"unknown time zone {name!r}: use an IANA name like 'Europe/Paris'"
        ) from None


def check_at(at: datetime, *, now: datetime, horizon_days: int, timezone: str = "UTC") -> datetime:
    """``at`` as an aware UTC time (a naive one is read in ``timezone``), in the future.

    Raises:
        RecurrenceError: It is not comfortably in the future, or too far ahead.
    """
    if at.tzinfo is None:
        at = at.replace(tzinfo=zone(timezone))
    at = at.astimezone(ZoneInfo("UTC")).replace(microsecond=0)
    if at <= now + timedelta(seconds=5):
        raise RecurrenceError(
            f"{at:%Y-%m-%d %H:%M:%S} UTC is in the past (it is now {now:%Y-%m-%d %H:%M:%S} UTC): "
            "choose a future time"
        )
    if at > now + timedelta(days=horizon_days):
        raise RecurrenceError(f"that is more than {horizon_days} days ahead: choose a nearer time")
    return at


def check_every(minutes: float, *, min_minutes: float) -> float:
    """A valid interval in minutes.

    Raises:
        RecurrenceError: Too frequent, or longer than a year.
    """
    if minutes < min_minutes:
        raise RecurrenceError(
            f"every {minutes:g} minutes is too frequent: the shortest allowed is "
            f"{min_minutes:g} minutes"
        )
    if timedelta(minutes=minutes) > MAX_EVERY:
        raise RecurrenceError("a recurrence longer than a year: use a cron expression instead")
    return minutes


def _value(text: str, low: int, high: int, names: dict[str, int], field: str) -> int:
    token = text.upper()
    number = names.get(token)
    if number is None:
        if not token.isdigit():
            raise RecurrenceError(f"cron {field}: {text!r} is not a number")
        number = int(token)
    if not low <= number <= high:
        raise RecurrenceError(f"cron {field}: {number} is outside {low}-{high}")
    return number


def _field(text: str, low: int, high: int, names: dict[str, int], field: str) -> set[int]:
    values: set[int] = set()
    for part in text.split(","):
        spec, _, step_text = part.partition("/")
        step = 1
        if step_text:
            if not step_text.isdigit() or int(step_text) == 0:
                raise RecurrenceError(f"cron {field}: step {step_text!r} must be a positive number")
            step = int(step_text)
        if spec == "*":
            start, end = low, high
        elif "-" in spec:
            a, b = spec.split("-", 1)
            start, end = _value(a, low, high, names, field), _value(b, low, high, names, field)
            if start > end:
                raise RecurrenceError(f"cron {field}: range {spec!r} runs backwards")
        else:
            start = _value(spec, low, high, names, field)
            end = high if step_text else start
        values.update(range(start, end + 1, step))
    return values


def check_cron(expression: str, *, min_minutes: float) -> str:
    """A valid five-field cron expression (or macro) no more frequent than ``min_minutes``.

    Raises:
        RecurrenceError: Malformed, or fires more often than allowed.
    """
    text = " ".join(expression.split())
    text = _MACROS.get(text.lower(), text)
    parts = text.split(" ")
    if len(parts) != 5:
        raise RecurrenceError(
            f"cron needs 5 fields (minute hour day-of-month month day-of-week), got {len(parts)}"
        )
    sets = [
        _field(p, lo, hi, names, name)
        for p, (name, lo, hi, names) in zip(parts, _FIELDS, strict=True)
    ]
    minutes, hours = sorted(sets[0]), sorted(sets[1])
    month_days = {1: 31, 2: 29, 3: 31, 4: 30, 5: 31, 6: 30, 7: 31, 8: 31, 9: 30, 10: 31, 11: 30}
    any_day = parts[4] == "*"
    if any_day and all(min(sets[2]) > month_days.get(month, 31) for month in sets[3]):
        raise RecurrenceError(f"{expression!r} names a day no chosen month has: it never fires")
    times = sorted(h * 60 + m for h in hours for m in minutes)
    gaps = [b - a for a, b in itertools.pairwise(times)] + [times[0] + 24 * 60 - times[-1]]
    if min(gaps) < min_minutes:
        raise RecurrenceError(
            f"{expression!r} fires every {min(gaps)} minutes at times: the shortest allowed "
            f"recurrence is {min_minutes:g} minutes"
        )
    return text
