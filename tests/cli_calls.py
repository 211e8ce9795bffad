"""The ``persyn`` CLI run in-process by tests: a command that succeeds, or one refused in a line."""

from __future__ import annotations

from typer.testing import CliRunner

from cli.main import app

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
