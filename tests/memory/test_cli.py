"""``persyn import`` and ``persyn memory search`` as a user runs them: output and errors."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner, Result

from cli import importer, memory_search
from schemas.settings import get_settings
from store.embedded import EmbeddedPostgres
from tests.memory.conftest import NewAgent

runner = CliRunner()


def persyn() -> typer.Typer:
    """The two commands mounted the way cli.main mounts them."""
    app = typer.Typer()
    app.command("import")(importer.import_dialog)
    app.add_typer(memory_search.app, name="memory")
    return app


@pytest.fixture
def cli_env(
    postgres: EmbeddedPostgres, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[None]:
    monkeypatch.setenv("PERSYN_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("PERSYN_DATABASE_URL", postgres.dsn)
    monkeypatch.setenv("PERSYN_ENCODER", "none")
    get_settings.cache_clear()
    yield
    get_settings.cache_clear()


async def invoke(args: list[str]) -> Result:
    """Run the CLI on a thread: its commands start their own event loop, as in a terminal."""
    app = persyn()
    return await asyncio.to_thread(lambda: runner.invoke(app, args))


def turn(text: str, at: str, **extra: object) -> str:
    row = {
        "conversation": "t1",
        "channel": {"service": "chat", "channel": "general"},
        "speaker": {"id": "u1", "name": "Ada"},
        "text": text,
        "at": at,
        **extra,
    }
    return json.dumps(row)


async def test_import_then_search(cli_env: None, new_agent: NewAgent, tmp_path: Path) -> None:
    agent = await new_agent()
    path = tmp_path / "dialog.jsonl"
    path.write_text(
        turn("We planted tomatoes in the garden.", "2024-04-01T09:00:00Z", tags=["garden"])
        + "\n"
        + turn("The cat knocked over the vase.", "2024-05-01T09:00:00Z")
        + "\n",
        encoding="utf-8",
    )
    done = await invoke(["import", str(path), "--agent", agent])
    assert done.exit_code == 0, done.output
    assert "imported 2 of 2 turns in 1 conversations (1 new)" in done.stdout
    again = await invoke(["import", str(path), "--agent", agent])
    assert again.exit_code == 0 and "nothing new" in again.stdout

    found = await invoke(["memory", "search", "tomato garden", "--agent", agent])
    assert found.exit_code == 0, found.output
    lines = found.stdout.strip().splitlines()
    assert "chat:general  Ada: We planted tomatoes in the garden." in lines[0]
    assert "ranked by keywords alone" in found.stderr

    as_json = await invoke(
        [
            "memory",
            "search",
            "--agent",
            agent,
            "--since",
            "2024-04-15",
            "--channel",
            "chat:general",
            "--json",
        ],
    )
    assert as_json.exit_code == 0, as_json.output
    hits = json.loads(as_json.stdout)["hits"]
    assert [h["text"] for h in hits] == ["The cat knocked over the vase."]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["memory", "search", "x", "--agent", "nobody-here"], "unknown agent 'nobody-here'"),
        (["memory", "search", "x", "--agent", "{agent}", "--regex", "(("], "invalid regular"),
        (["memory", "search", "x", "--agent", "{agent}", "--since", "soonish"], "cannot read"),
        (
            [
                "memory",
                "search",
                "x",
                "--agent",
                "{agent}",
                "--since",
                "2024-02-02",
                "--until",
                "2024-02-01",
            ],
            "is after until",
        ),
        (["memory", "search", "x", "--agent", "{agent}", "--channel", "no:such"], "no channel"),
        (["memory", "search", "--agent", "{agent}"], "give a query"),
        (["import", "{missing}", "--agent", "{agent}"], "is not a file"),
        (["import", "{bad}", "--agent", "{agent}"], "line 2: not JSON"),
    ],
)
async def test_user_errors_are_one_line_and_exit_1(
    cli_env: None, new_agent: NewAgent, tmp_path: Path, args: list[str], message: str
) -> None:
    agent = await new_agent()
    bad = tmp_path / "bad.jsonl"
    bad.write_text(turn("fine", "2024-01-01T00:00:00Z") + "\n{nope\n", encoding="utf-8")
    values = {"agent": agent, "missing": str(tmp_path / "missing.jsonl"), "bad": str(bad)}
    result = await invoke([a.format(**values) for a in args])
    assert result.exit_code == 1
    errors = [line for line in result.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and message in errors[0], result.output
    assert "Traceback" not in result.output
