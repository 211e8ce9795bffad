"""What every command shares: one-line errors for mistakes a user can make, async running."""

from __future__ import annotations

import asyncio
import functools
import sys
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any, NoReturn, ParamSpec, TypeVar

import typer

P = ParamSpec("P")
T = TypeVar("T")


class UserError(Exception):
    """A mistake the user can fix; shown as one line, exit status 1."""


def user_errors() -> tuple[type[BaseException], ...]:
    """Mistakes a user can fix, shown as one line.

    Imported when an error is being handled, not when the command starts: each command loads
    only what it uses (see ``cli.main``).
    """
    from activities.gateway.registry import RegistryError
    from schemas.ids import InvalidIdError
    from schemas.text import InvalidTextError
    from store.embedded import PostgresStartError
    from store.private_files import PrivatePathError
    from store.queries.agents import AgentExistsError
    from temporal.client import TemporalUnavailableError
    from temporal.devserver import DevServerError
    from temporal.inbox import SubmitRejectedError
    from temporal.keyring import KeyringError
    from workers.stack import StackError

    return (
        UserError,
        InvalidIdError,
        InvalidTextError,
        AgentExistsError,
        TemporalUnavailableError,
        DevServerError,
        PostgresStartError,
        RegistryError,
        SubmitRejectedError,
        StackError,
        KeyringError,
        PrivatePathError,
    )


def fail(message: str, *, code: int = 1) -> NoReturn:
    """Print ``error: message`` to stderr and exit."""
    typer.echo(f"error: {message}", err=True)
    raise typer.Exit(code)


def friendly_errors(fn: Callable[P, T]) -> Callable[P, T]:
    """Turn user-caused exceptions into one-line messages and a non-zero exit."""

    @functools.wraps(fn)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> T:
        try:
            return fn(*args, **kwargs)
        except Exception as err:
            # What the command imported is loaded by now; the error types come from there.
            from sqlalchemy.exc import OperationalError

            from usecases.errors import UseCaseError

            if isinstance(err, UseCaseError):
                fail(_with_hint(err))
            if isinstance(err, user_errors()):
                fail(str(err))
            if isinstance(err, OperationalError):
                first = str(err.orig or err).strip().splitlines()[0]
                fail(
                    f"cannot reach the database ({first}): "
                    "run `persyn up` or set PERSYN_DATABASE_URL"
                )
            if isinstance(err, ValueError):  # pydantic validation of user input
                fail(_first_error(err))
            raise

    return wrapper


def _with_hint(err: Exception) -> str:
    """A use case's refusal, with the command that shows what exists."""
    from usecases.errors import NotTheAgentsError, UnknownAgentError

    if isinstance(err, UnknownAgentError):
        return f"{err}: see `persyn agent list`"
    if isinstance(err, NotTheAgentsError):
        return f"{err}: see `persyn {err.what} list --agent {err.agent}`"
    return str(err)


def _first_error(err: ValueError) -> str:
    errors = getattr(err, "errors", None)
    if callable(errors):
        details = errors()
        if details:
            first = details[0]
            where = ".".join(str(p) for p in first.get("loc", ()))
            message = str(first.get("msg", err)).removeprefix("Value error, ")
            return f"{where}: {message}" if where else message
    return str(err).splitlines()[0]


def run(coro: Coroutine[Any, Any, T]) -> T:
    """Run a coroutine to completion on a fresh event loop."""

    async def quietly() -> T:
        asyncio.get_running_loop().set_exception_handler(_abandoned_is_not_news)
        return await coro

    return asyncio.run(quietly())


_LEFTOVERS = ("Future exception was never retrieved", "Task exception was never retrieved")


def _abandoned_is_not_news(loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
    """Keep a command's output to what it says: no tracebacks from what it chose to abandon.

    A command that gives up waiting (no worker, no server) cancels its pending calls; client
    libraries leave futures behind that then hold the cancellation or a connection error. The
    command has already said what happened in one line; anything else is reported as usual.
    """
    error = context.get("exception")
    if str(context.get("message", "")).startswith(_LEFTOVERS) and _abandoned(error):
        return
    loop.default_exception_handler(context)


def _abandoned(error: object) -> bool:
    if isinstance(error, asyncio.CancelledError):
        return True
    # A connection error from the Temporal SDK (imported only if the command used it).
    rpc_error = getattr(sys.modules.get("temporalio.service"), "RPCError", None)
    return rpc_error is not None and isinstance(error, rpc_error)


def echo_err(message: str) -> None:
    """A notice on stderr."""
    print(message, file=sys.stderr)


AsyncFn = Callable[..., Awaitable[Any]]


def excerpt(text: str, limit: int) -> str:
    """The first line of ``text``, cut at ``limit`` characters; ``…`` says something was left."""
    first, _, rest = text.partition("\n")
    if len(first) > limit:
        return first[: limit - 1].rstrip() + "…"
    return first + (" …" if rest else "")
