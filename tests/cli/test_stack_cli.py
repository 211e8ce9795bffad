"""The ``persyn`` command end to end on its own embedded stack: up, status, talk, down, up.

This starts a private Temporal dev server, PostgreSQL and worker process under a temporary
PERSYN_HOME with free ports, exactly as ``persyn up`` does for a user.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from temporal.devserver import free_port

PERSYN = [sys.executable, "-m", "cli.main"]


@pytest.fixture(scope="module")
def home() -> Iterator[dict[str, str]]:
    # Not pytest's tmp_path: a concurrent pytest run prunes old base directories under it.
    with tempfile.TemporaryDirectory(prefix="persyn-home-") as path:
        # The embedded PostgreSQL may run as another user: it must reach its data directory.
        Path(path).chmod(0o755)
        yield from _stack(path)


def _stack(root: str) -> Iterator[dict[str, str]]:
    env = {
        **os.environ,
        "PERSYN_HOME": root,
        "PERSYN_TEMPORAL_ADDRESS": f"127.0.0.1:{free_port()}",
        "PERSYN_TEMPORAL_UI_PORT": str(free_port()),
        "PERSYN_POSTGRES_PORT": str(free_port()),
        "PERSYN_CODEC_PORT": str(free_port()),
        "PERSYN_PROVIDER": "scripted",
    }
    for key in ("PERSYN_DATABASE_URL", "PERSYN_EMBEDDED"):
        env.pop(key, None)
    yield env
    subprocess.run([*PERSYN, "down"], env=env, capture_output=True, check=False, timeout=120)


def persyn(
    env: dict[str, str], *args: str, input_: bytes | None = None
) -> subprocess.CompletedProcess[str]:
    """Run ``persyn``; bytes on stdin (for invalid UTF-8) come back decoded leniently."""
    result = subprocess.run(
        [*PERSYN, *args], env=env, capture_output=True, input=input_, timeout=180, check=False
    )
    return subprocess.CompletedProcess(
        result.args,
        result.returncode,
        result.stdout.decode(errors="replace"),
        result.stderr.decode(errors="replace"),
    )


def test_up_status_talk_down_up(home: dict[str, str]) -> None:
    up = persyn(home, "up")
    assert up.returncode == 0, up.stderr
    assert "Temporal Web UI: http://127.0.0.1:" in up.stdout

    status = persyn(home, "status", "--json")
    assert status.returncode == 0, status.stderr
    components = {c["name"]: c for c in json.loads(status.stdout)["components"]}
    assert set(components) == {"temporal", "web-ui", "postgres", "worker"}
    assert all(c["healthy"] for c in components.values())
    assert "pgvector" in components["postgres"]["detail"]

    again = persyn(home, "up")  # idempotent: everything already runs
    assert again.returncode == 0, again.stderr

    created = persyn(home, "agent", "create", "ada", "--name", "Ada", "--persona", "Curious.")
    assert created.returncode == 0, created.stderr
    duplicate = persyn(home, "agent", "create", "ada", "--name", "Ada", "--persona", "Curious.")
    assert duplicate.returncode == 1
    assert duplicate.stderr.strip() == "error: agent 'ada' already exists: pick another handle"

    first = persyn(home, "send", "--agent", "ada", "--json", "remember the blue door")
    assert first.returncode == 0, first.stderr
    receipt = json.loads(first.stdout)
    assert receipt["marker"]["outcome"] == "spoke"
    assert receipt["marker"]["text"] == "remember the blue door"

    history = Path(home["PERSYN_HOME"]) / "history.jsonl"
    history.write_text(
        json.dumps(
            {
                "conversation": "old-chat",
                "channel": {"service": "chat", "channel": "attic"},
                "speaker": {"id": "bo"},
                "text": "We painted the blue door in 2019.",
                "at": "2019-06-01T10:00:00Z",
            }
        ),
        encoding="utf-8",
    )
    imported = persyn(
        home, "import", str(history), "--agent", "ada", "--consolidate", "--no-embed", "--json"
    )
    assert imported.returncode == 0, imported.stderr
    report = json.loads(imported.stdout)
    assert report["turns_added"] == 1
    assert len(report["consolidations"]) == 1

    down = persyn(home, "down")
    assert down.returncode == 0, down.stderr
    # The open conversation was asked to remember what was said, as of the stop.
    assert "memories: forming for 1 open conversation (they finish" in down.stdout
    stopped = persyn(home, "status")
    assert stopped.returncode == 1

    up_again = persyn(home, "up")
    assert up_again.returncode == 0, up_again.stderr
    listed = persyn(home, "agent", "list", "--json")
    assert [a["handle"] for a in json.loads(listed.stdout)] == ["ada"]
    second = persyn(home, "send", "--agent", "ada", "--json", "and now?")
    assert second.returncode == 0, second.stderr
    # The conversation survived the restart: Temporal and PostgreSQL persisted it.
    assert (
        json.loads(second.stdout)["marker"]["conversation_id"]
        == (receipt["marker"]["conversation_id"])
    )


@pytest.mark.parametrize(
    ("args", "stdin", "message"),
    [
        (["send", "--agent", "ghost", "hi"], None, "error: there is no agent 'ghost'"),
        (["send", "--agent", "ada", ""], None, "error: text: message is empty"),
        (
            ["send", "--agent", "ada", "--conversation", "abc", "hi"],
            None,
            "error: conversation id 'abc' is not a ULID",
        ),
        (["send", "--agent", "ada", "-"], b"a\x00b", "error: text contains a NUL character"),
        (["send", "--agent", "ada", "-"], b"\xff\xfe", "error: standard input is not valid UTF-8"),
        (["send", "--agent", "ada", "x" * 40_000], None, "error: text: message is 40,000"),
        (["send", "--agent", "BAD!", "hi"], None, "error: agent handle 'BAD!' is invalid"),
        (["agent", "show", "nobody"], None, "error: there is no agent 'nobody'"),
    ],
)
def test_user_errors_are_one_line(
    home: dict[str, str], args: list[str], stdin: bytes | None, message: str
) -> None:
    result = persyn(home, *args, input_=stdin)
    stderr = result.stderr
    assert result.returncode == 1
    assert stderr.startswith(message), stderr
    assert len(stderr.strip().splitlines()) == 1


def test_status_with_nothing_running_says_what_to_do_in_one_line_per_component() -> None:
    with tempfile.TemporaryDirectory(prefix="persyn-home-") as path:
        env = next(_stack(path))  # free ports, nothing started on them
        env["PERSYN_LOCAL_SERVERS"] = ""
        shown = persyn(env, "status")

    assert shown.returncode == 1
    rows = [line for line in shown.stdout.splitlines() if " DOWN " in line]
    assert {row.split()[0] for row in rows} >= {"temporal", "web-ui", "postgres", "worker"}
    for row in rows:
        assert "run `persyn up`" in row or "persyn up" in row, row
        assert not any(raw in row for raw in ("Errno", "Error", "urlopen", "psycopg")), row
