"""Logs a person can read: no tracebacks for expected cancellations, no multi-kilobyte lines.

A worker that stops cancels what it was doing; that is the plan, not a bug, so a
``CancelledError`` is logged as one line. A message longer than :data:`MAX_MESSAGE_CHARS` (a
provider's error echoing a whole grammar or prompt back) is cut, saying how much was cut.
"""

from __future__ import annotations

import asyncio
import logging

MAX_MESSAGE_CHARS = 2000


def _cancelled(error: BaseException | None) -> bool:
    """Whether ``error`` is, or was caused by, a cancellation."""
    seen: set[int] = set()
    while error is not None and id(error) not in seen:
        if isinstance(error, asyncio.CancelledError):
            return True
        seen.add(id(error))
        error = error.__cause__ or error.__context__
    return False


class ReadableRecords(logging.Filter):
    """Shortens what would make a log unreadable; never drops a record."""

    def filter(self, record: logging.LogRecord) -> bool:
        """Rewrite ``record`` in place; always keep it."""
        if record.exc_info and _cancelled(record.exc_info[1]):
            record.msg = f"{record.getMessage()} (cancelled)"
            record.args = None
            record.exc_info = None
            record.exc_text = None
        message = record.getMessage()
        if len(message) > MAX_MESSAGE_CHARS:
            record.msg, record.args = _cut(message), None
        if record.exc_info and not record.exc_text:
            # The traceback ends in the exception's message, which can be just as long.
            record.exc_text = _cut(_FORMATTER.formatException(record.exc_info), keep_end=True)
        return True


_FORMATTER = logging.Formatter()


def _cut(text: str, *, keep_end: bool = False) -> str:
    if len(text) <= MAX_MESSAGE_CHARS:
        return text
    note = f"… [{len(text) - MAX_MESSAGE_CHARS:,} characters cut] …"
    if keep_end:  # a traceback's frames matter; cut the middle of its last line instead
        head = MAX_MESSAGE_CHARS * 3 // 4
        return f"{text[:head]}{note}{text[-(MAX_MESSAGE_CHARS - head) :]}"
    return f"{text[:MAX_MESSAGE_CHARS]}{note}"


def readable_logs() -> None:
    """Install :class:`ReadableRecords` on every handler of the root logger."""
    for handler in logging.getLogger().handlers:
        handler.addFilter(ReadableRecords())
