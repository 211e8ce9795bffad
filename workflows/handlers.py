"""The handler boundary: how every signal, update and query of a Persyn workflow reads its input.

Why handlers take their payloads raw: the SDK decodes a handler's arguments before any of our
code runs. A signal whose handler raises (a payload of the wrong arity, or a value that decodes
but breaks the workflow later) fails the workflow task on every retry, so one malformed signal
would stall the agent for good. An update or query whose input does not decode answers a
retryable ``RuntimeError("Failed decoding arguments")`` that names no field. So every handler is
declared with ``*payloads`` (any number of JSON values decodes, nothing can fail before our
code; a payload that is not JSON at all, or empty, arrives as a ``RawValue`` from Persyn's
converter, ``temporal/payload_converter.py``) and validates them here against its model:

* :func:`guarded_signal` wraps a signal handler: bad input, or any exception from the handler,
  is logged as a warning and dropped. No signal can fail a workflow task, by construction.
* :func:`guarded_update`, :func:`guarded_validator` and :func:`guarded_query` answer bad input
  with a non-retryable ``ApplicationError`` of type :data:`INVALID_INPUT` whose message names
  each bad field.

The handler itself is written with its typed model, as usual; :func:`original` returns it.

Deterministic: no I/O, only ``workflow.logger``.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError
from temporalio import workflow
from temporalio.common import RawValue
from temporalio.exceptions import ApplicationError

INVALID_INPUT = "InvalidInput"
"""``ApplicationError.type`` of a handler input that does not validate."""

M = TypeVar("M", bound=BaseModel)
R = TypeVar("R")
W = TypeVar("W")


def describe(err: ValidationError) -> str:
    """One line naming each bad field and what is wrong with it (``event.text: ...``)."""
    parts = []
    for error in err.errors(include_url=False):
        where = ".".join(str(part) for part in error["loc"])
        if error["type"] == "unstorable_text":
            # Its message already names the field inside the model that refused it.
            parts.append(f"{where}.{error['msg']}" if where else error["msg"])
            continue
        parts.append(f"{where or 'payload'}: {error['msg']}")
    return "; ".join(parts)


MAX_REASON_CHARS = 1000
"""Longest refusal reason: a hostile payload must not make the refusal itself huge."""


def printable(text: str) -> str:
    """``text`` on one line, every non-printable character escaped as Python writes it.

    A refusal echoes field names a client chose, and must stay one line that can be stored.
    """
    return "".join(ch if ch.isprintable() else repr(ch)[1:-1] for ch in text)


def invalid(handler: str, reason: str) -> ApplicationError:
    """The non-retryable error for bad input to ``handler``: retrying the same input cannot help."""
    shown = printable(reason)
    if len(shown) > MAX_REASON_CHARS:
        shown = shown[: MAX_REASON_CHARS - 3] + "..."
    return ApplicationError(
        f"invalid {handler} input: {shown}", type=INVALID_INPUT, non_retryable=True
    )


def decode(handler: str, model: type[M], payloads: Sequence[Any], *, optional: bool = False) -> M:
    """Validate a handler's raw payloads as one ``model``.

    Args:
        handler: The handler's name, for the error message.
        model: The wire model the handler takes.
        payloads: What the SDK decoded from the payloads (plain JSON values).
        optional: Whether no payload at all means the model's defaults (queries without input).

    Raises:
        ApplicationError: Non-retryable, type :data:`INVALID_INPUT`; names every bad field.
    """
    if not payloads and optional:
        return model()
    if len(payloads) != 1:
        raise invalid(handler, f"send exactly one JSON object, not {len(payloads)} payloads")
    if isinstance(payloads[0], RawValue):
        raise invalid(handler, unreadable(payloads[0]))
    try:
        return model.model_validate(payloads[0])
    except ValidationError as err:
        raise invalid(handler, describe(err)) from None


def unreadable(raw: RawValue) -> str:
    """Why a payload the converter could not decode is refused (it arrives raw)."""
    size = len(raw.payload.data)
    if size == 0:
        return "the payload is empty (0 bytes): send one JSON object"
    encoding = raw.payload.metadata.get("encoding", b"").decode(errors="replace") or "none"
    return f"the payload ({size} bytes, encoding {encoding}) is not JSON: send one JSON object"


WRAPPED = "__persyn_handler__"
"""Attribute on a guarded handler holding the typed function it wraps (for tests and docs)."""


def original(fn: Callable[..., Any]) -> Callable[..., Any]:
    """The typed function behind a guarded handler (``fn`` itself when it is not guarded)."""
    wrapped: Callable[..., Any] = getattr(fn, WRAPPED, fn)
    return wrapped


def _expose(handler: Callable[..., Any], fn: Callable[..., Any]) -> None:
    # Not functools.wraps: the SDK reads the signature through __wrapped__, and must see
    # ``*payloads`` so that any number of payloads reaches our code.
    handler.__name__ = fn.__name__
    handler.__qualname__ = fn.__qualname__
    handler.__doc__ = fn.__doc__
    setattr(handler, WRAPPED, fn)


def guarded_signal(
    model: type[M],
    *,
    on_invalid: Callable[[W, Sequence[Any], str], None] | None = None,
) -> Callable[[Callable[[W, M], None]], Callable[..., None]]:
    """Make a signal handler that validates its input and can never fail a workflow task.

    Args:
        model: The wire model the handler takes.
        on_invalid: Called with the raw payloads and the reason when they do not validate
            (for example to record why an event was refused); its own failure is dropped too.

    Returns:
        A decorator; put ``@workflow.signal(...)`` above it.
    """

    def wrap(fn: Callable[[W, M], None]) -> Callable[..., None]:
        name = fn.__name__

        def handler(self: W, *payloads: Any) -> None:
            try:
                data = decode(name, model, payloads)
            except ApplicationError as err:
                workflow.logger.warning("dropped a malformed %s signal: %s", name, err.message)
                if on_invalid is not None:
                    try:
                        on_invalid(self, payloads, err.message)
                    except Exception as hook_err:
                        workflow.logger.warning("could not record the refusal: %s", hook_err)
                return
            try:
                fn(self, data)
            except Exception as err:
                # A handler bug must not become a poison pill that fails every workflow task.
                workflow.logger.warning("dropped a %s signal the handler refused: %s", name, err)

        _expose(handler, fn)
        return handler

    return wrap


def guarded_query(
    model: type[M], *, optional: bool = False
) -> Callable[[Callable[[W, M], R]], Callable[..., R]]:
    """Make a query handler whose bad input is answered with an error naming the field.

    Args:
        model: The wire model the query takes.
        optional: Whether the query may be sent with no input at all.

    Returns:
        A decorator; put ``@workflow.query(...)`` above it.
    """

    def wrap(fn: Callable[[W, M], R]) -> Callable[..., R]:
        def handler(self: W, *payloads: Any) -> R:
            return fn(self, decode(fn.__name__, model, payloads, optional=optional))

        _expose(handler, fn)
        return handler

    return wrap


def guarded_update(
    model: type[M],
) -> Callable[[Callable[[W, M], Awaitable[R]]], Callable[..., Awaitable[R]]]:
    """Make an update handler whose bad input fails the update, non-retryably, naming the field.

    Returns:
        A decorator; put ``@workflow.update(...)`` above it.
    """

    def wrap(fn: Callable[[W, M], Awaitable[R]]) -> Callable[..., Awaitable[R]]:
        async def handler(self: W, *payloads: Any) -> R:
            return await fn(self, decode(fn.__name__, model, payloads))

        _expose(handler, fn)
        return handler

    return wrap


def guarded_validator(
    model: type[M], *, handler: str
) -> Callable[[Callable[[W, M], None]], Callable[..., None]]:
    """Make an update validator that refuses bad input before the update is accepted.

    Args:
        model: The wire model the update takes.
        handler: The update's name, for the error message.

    Returns:
        A decorator; put ``@<update>.validator`` above it.
    """

    def wrap(fn: Callable[[W, M], None]) -> Callable[..., None]:
        def validator(self: W, *payloads: Any) -> None:
            fn(self, decode(handler, model, payloads))

        _expose(validator, fn)
        return validator

    return wrap
