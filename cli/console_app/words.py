"""How the console words an error: one short line, saying what to fix."""

from __future__ import annotations


def first_line(err: BaseException) -> str:
    """An error as one short line."""
    text = str(getattr(err, "orig", None) or err).strip()
    return (text.splitlines()[0] if text else type(err).__name__)[:160]


def reason_of(err: ValueError) -> str:
    """Why the text was refused, from a validation error (its first complaint)."""
    errors = getattr(err, "errors", None)
    if callable(errors) and errors():
        first = errors()[0]
        where = ".".join(str(p) for p in first.get("loc", ()))
        message = str(first.get("msg", err)).removeprefix("Value error, ")
        return f"{where}: {message}" if where else message
    return str(err).splitlines()[0]
