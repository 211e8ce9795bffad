"""A command's output is what it says: what it abandoned leaves no traceback behind."""

from __future__ import annotations

import asyncio
import gc

import pytest
from temporalio.service import RPCError, RPCStatusCode

from cli.common import run


async def abandon(error: BaseException) -> None:
    """Leave a future holding ``error`` that nobody will read, as a cancelled client call does."""
    future = asyncio.get_running_loop().create_future()
    future.set_exception(error)
    del future
    gc.collect()


@pytest.mark.parametrize(
    "error",
    [RPCError("transport error", RPCStatusCode.UNKNOWN, b""), asyncio.CancelledError()],
    ids=["connection", "cancellation"],
)
def test_what_a_command_abandoned_is_not_reported(
    error: BaseException, caplog: pytest.LogCaptureFixture
) -> None:
    run(abandon(error))

    assert "never retrieved" not in caplog.text


def test_anything_else_left_behind_is_still_reported(caplog: pytest.LogCaptureFixture) -> None:
    run(abandon(ValueError("a bug")))

    assert "Future exception was never retrieved" in caplog.text
    assert "a bug" in caplog.text
