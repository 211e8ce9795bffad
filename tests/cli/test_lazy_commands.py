"""The ``persyn`` command loads a command's module only when that command runs."""

from __future__ import annotations

import ast
import subprocess
import sys

import pytest
from typer.testing import CliRunner

from cli.main import COMMANDS, app, load

runner = CliRunner()


@pytest.mark.parametrize("name", list(COMMANDS))
def test_the_listing_says_what_the_command_itself_says(name: str) -> None:
    real = (load(name).help or "").strip().splitlines()[0]
    assert COMMANDS[name].help == real


def test_help_lists_every_command_without_importing_any() -> None:
    output, loaded = _fresh_interpreter(
        "from cli.main import app\ntry:\n    app(['--help'])\nexcept SystemExit:\n    pass\n",
        heavy=("cli.", "temporalio", "store", "sqlalchemy", "activities", "workers"),
    )
    assert "Commands" in output
    assert loaded == ["cli.main"]

    listed = runner.invoke(app, ["--help"])
    assert listed.exit_code == 0
    for name in COMMANDS:
        assert f" {name} " in listed.output


def test_a_subcommand_runs_through_the_lazy_group() -> None:
    result = runner.invoke(app, ["schema", "--help"])
    assert result.exit_code == 0
    assert "export" in result.output


def test_an_unknown_command_is_one_clear_error() -> None:
    result = runner.invoke(app, ["nope"])
    assert result.exit_code == 2
    assert "No such command 'nope'" in result.output


def test_up_can_start_the_worker_before_loading_the_stack() -> None:
    _, loaded = _fresh_interpreter(
        "import cli.stack\n",
        heavy=("temporalio", "sqlalchemy", "alembic", "store", "activities", "workers.stack"),
    )
    # store.private_files is the standard library only: every process writes through it.
    assert [m for m in loaded if m not in ("store", "store.private_files")] == []


def _fresh_interpreter(code: str, *, heavy: tuple[str, ...]) -> tuple[str, list[str]]:
    """Run ``code`` in a new Python; its output and which ``heavy`` modules it loaded."""
    report = f"import sys; print(sorted(m for m in sys.modules if m.startswith({heavy!r})))\n"
    done = subprocess.run(
        [sys.executable, "-c", code + report],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    *output, loaded = done.stdout.strip().splitlines()
    return "\n".join(output), ast.literal_eval(loaded)
