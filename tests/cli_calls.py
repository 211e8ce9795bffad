"""The ``persyn`` CLI run in-process by tests: a command that succeeds, or one refused in a line."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import pytest
from typer.testing import CliRunner

from cli.main import app
from schemas.settings import get_settings
from tests.harness import Stack

runner = CliRunner()


def ok(*args: str) -> str:
    """Run ``persyn ARGS``; its standard output, after checking it exited 0."""
    result = runner.invoke(app, list(args))
    assert result.exit_code == 0, result.output
    return result.stdout


def refused(*args: str) -> str:
    """Run ``persyn ARGS``; its one error line, after checking it exited 1 with only that line."""
    result = runner.invoke(app, list(args))
    assert result.exit_code == 1, result.output
    [line] = result.stderr.splitlines()
    assert line.startswith("error: ")
    return line


@contextmanager
def aimed_at(stack: Stack, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """While it lasts, the CLI's settings name ``stack`` (its home, database and Temporal)."""
    monkeypatch.setenv("PERSYN_HOME", str(stack.home))
    monkeypatch.setenv("PERSYN_DATABASE_URL", stack.dsn)
    monkeypatch.setenv("PERSYN_TEMPORAL_ADDRESS", stack.temporal_address)
    monkeypatch.setenv("PERSYN_EMBEDDED", "false")
    get_settings.cache_clear()
    try:
        yield
    finally:
        get_settings.cache_clear()
