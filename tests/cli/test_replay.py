"""``persyn replay FILE...``: exported histories replayed against this code, with no server."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from cli.main import app
from schemas.settings import get_settings
from tests.harness import Stack

runner = CliRunner()
TESTS = Path(__file__).parent.parent
RECORDED = sorted([*TESTS.glob("histories/*.json"), *TESTS.glob("*/histories/*.json")])


@pytest.fixture(autouse=True)
def offline(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Settings of their own, and a Temporal address where nothing listens."""
    monkeypatch.setenv("PERSYN_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("PERSYN_TEMPORAL_ADDRESS", "127.0.0.1:9")
    get_settings.cache_clear()
    yield
    get_settings.cache_clear()


def test_every_recorded_history_replays_without_a_server() -> None:
    assert len(RECORDED) >= 10
    result = runner.invoke(app, ["replay", "--no-codec", *map(str, RECORDED)])
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines == [f"ok      {path}" for path in RECORDED]


def test_with_the_codec_the_replayer_seals_with_the_deployments_keys(
    stack: Stack, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A worker seals each command's payloads as it completes a task; so does the replayer.
    monkeypatch.setenv("PERSYN_HOME", str(stack.home))
    monkeypatch.setenv("PERSYN_DATABASE_URL", stack.dsn)
    get_settings.cache_clear()
    result = runner.invoke(app, ["replay", "--codec", *map(str, RECORDED[:3])])
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines() == [f"ok      {path}" for path in RECORDED[:3]]


def test_with_the_codec_and_no_database_it_says_so_once(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PERSYN_DATABASE_URL", "postgresql://postgres@127.0.0.1:9/persyn")
    get_settings.cache_clear()
    result = runner.invoke(app, ["replay", "--codec", *map(str, RECORDED[:2])])
    assert result.exit_code == 1
    assert result.stdout == ""
    [line] = result.stderr.splitlines()
    assert line.startswith("error: the payload codec needs the agents' keys")
    assert line.endswith("histories recorded without the codec replay with --no-codec")


def test_a_history_the_code_would_not_continue_fails_by_name(tmp_path: Path) -> None:
    history = json.loads((TESTS / "histories" / "activation.json").read_text())
    # An old run scheduled an activity this code would not: the workflow changed unpatched.
    scheduled = next(
        e["activityTaskScheduledEventAttributes"]
        for e in history["events"]
        if "activityTaskScheduledEventAttributes" in e
    )
    scheduled["activityType"]["name"] += "_renamed"
    changed = tmp_path / "activation-changed.json"
    changed.write_text(json.dumps(history))
    kept = TESTS / "histories" / "agent.json"

    result = runner.invoke(app, ["replay", "--no-codec", str(kept), str(changed)])

    assert result.exit_code == 1
    ok, failed = result.stdout.splitlines()
    assert ok == f"ok      {kept}"
    assert failed.startswith(f"FAILED  {changed}: ")
    assert "nondetermin" in failed.lower()
    assert "1 of 2 histories do not replay" in result.stderr


@pytest.mark.parametrize(
    ("content", "says"),
    [("not json at all", "not JSON"), ('{"events": []}', "no history events")],
)
def test_a_file_that_is_not_a_history_is_one_line_naming_it(
    tmp_path: Path, content: str, says: str
) -> None:
    bad = tmp_path / "downloaded.json"
    bad.write_text(content)
    result = runner.invoke(app, ["replay", str(bad)])
    assert result.exit_code == 1
    assert result.stderr.splitlines() == [result.stderr.strip()]
    assert result.stderr.startswith(f"error: {bad}: {says}")
