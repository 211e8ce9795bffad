"""Request bodies are checked as bytes before anything is parsed, stored or submitted.

Each refusal is one line that names the problem: too large, not UTF-8, a NUL byte, not JSON,
or a field that breaks a rule.
"""

from __future__ import annotations

import json
from typing import Any, TypeVar

from fastapi import Request
from pydantic import BaseModel, ValidationError

M = TypeVar("M", bound=BaseModel)

DEFAULT_MAX_BODY_BYTES = 65_536
"""The default cap on a request body: room for the 32,000-character text limit, in UTF-8."""


class BodyError(Exception):
    """A body refused before it reached any use case; ``status`` is the HTTP status."""

    def __init__(self, status: int, detail: str) -> None:
        super().__init__(detail)
        self.status = status
        self.detail = detail


async def read_capped(request: Request, *, limit: int) -> bytes:
    """The body, refused as soon as it passes ``limit`` bytes (a lying length is no help)."""
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > limit:
        raise BodyError(413, _too_large(int(declared), limit))
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise BodyError(413, _too_large(size, limit))
        chunks.append(chunk)
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
    try:
        return json.loads(text)
    except json.JSONDecodeError as err:
        raise BodyError(
            400, f"the body is not JSON ({err.msg} at line {err.lineno} column {err.colno})"
        ) from None


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
