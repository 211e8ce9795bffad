"""Request bodies are checked as bytes before anything is parsed, stored or submitted.

Each refusal is one line that names the problem: too large, sent too slowly, not UTF-8, a NUL
byte, nested too deep, not JSON, or a field that breaks a rule.
"""

from __future__ import annotations

import asyncio
import json
import re
from typing import Any, TypeVar

from fastapi import Request
from pydantic import BaseModel, ValidationError

M = TypeVar("M", bound=BaseModel)

DEFAULT_MAX_BODY_BYTES = 65_536
"""The default cap on a request body: room for the 32,000-character text limit, in UTF-8."""

DEFAULT_BODY_TIMEOUT_S = 10.0
"""How long a client may take to send a body once its headers are in (then 408)."""

MAX_DEPTH = 400
"""The deepest nesting of arrays and objects a body may have. A message needs three levels;
the cap keeps the parser's recursion (and pydantic's) far from Python's stack limit."""


_STRING_OR_BRACKET = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"?|[\[\]{}]', re.DOTALL)
"""A JSON string (to skip, an unterminated one included) or a bracket (to count)."""


class BodyError(Exception):
    """A body refused before it reached any use case; ``status`` is the HTTP status."""

    def __init__(self, status: int, detail: str) -> None:
        super().__init__(detail)
        self.status = status
        self.detail = detail


async def read_capped(
    request: Request, *, limit: int, timeout: float = DEFAULT_BODY_TIMEOUT_S
) -> bytes:
    """The body, refused as soon as it passes ``limit`` bytes (a lying length is no help).

    A client that has not sent the whole body within ``timeout`` seconds is refused with 408,
    so a connection trickling bytes cannot hold the service's memory and a task forever.
    """
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > limit:
        raise BodyError(413, _too_large(int(declared), limit))
    chunks: list[bytes] = []
    size = 0
    try:
        async with asyncio.timeout(timeout):
            async for chunk in request.stream():
                size += len(chunk)
                if size > limit:
                    raise BodyError(413, _too_large(size, limit))
                chunks.append(chunk)
    except TimeoutError:
        raise BodyError(
            408, f"the body did not arrive within {timeout:g} s ({size} bytes came): send it again"
        ) from None
    return b"".join(chunks)


def _too_large(size: int, limit: int) -> str:
    return f"the body is over {limit} bytes (at least {size}): send a shorter message"


def decode_json(raw: bytes) -> Any:
    """The JSON value in ``raw``; refuses non-UTF-8, NUL bytes and anything not JSON."""
    if not raw.strip():
        raise BodyError(400, "the body is empty: send one JSON object")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as err:
        raise BodyError(
            400,
            f"the body is not valid UTF-8 (byte 0x{raw[err.start]:02x} at offset {err.start}): "
            "encode it as UTF-8",
        ) from None
    if "\x00" in text:
        raise BodyError(400, f"the body contains a NUL byte at offset {text.index(chr(0))}")
    _check_depth(text)
    try:
        return json.loads(text)
    except json.JSONDecodeError as err:
        raise BodyError(
            400, f"the body is not JSON ({err.msg} at line {err.lineno} column {err.colno})"
        ) from None


def _check_depth(text: str) -> None:
    """Refuse JSON nested deeper than :data:`MAX_DEPTH`, before any parser recurses into it.

    One pass without recursion: brackets are counted outside strings (each string is skipped
    whole, escaped quotes and all). Closing brackets are not matched against openers; the
    parser that runs next refuses a body whose brackets do not pair up.
    """
    depth = 0
    for token in _STRING_OR_BRACKET.finditer(text):
        mark = token.group()
        if mark in "[{":
            depth += 1
            if depth > MAX_DEPTH:
                raise BodyError(
                    400,
                    f"the body is nested more than {MAX_DEPTH} levels deep (at offset "
                    f"{token.start()}): send a flat JSON object",
                )
        elif mark in "]}":
            depth -= 1


def first_error(err: ValidationError) -> str:
    """A validation error as one line: the field, then what is wrong with it."""
    first = err.errors()[0]
    where = ".".join(str(part) for part in first.get("loc", ()))
    message = str(first.get("msg", err)).removeprefix("Value error, ")
    return f"{where}: {message}" if where else message


def parse(raw: bytes, model: type[M]) -> M:
    """``raw`` as ``model``, or a :class:`BodyError` naming the first bad field."""
    value = decode_json(raw)
    if not isinstance(value, dict):
        raise BodyError(400, f"the body is JSON but not an object ({type(value).__name__})")
    try:
        return model.model_validate(value)
    except ValidationError as err:
        raise BodyError(422, first_error(err)) from None
