"""``persyn up`` with the codec on, end to end: Temporal stores ciphertext, the codec endpoint it
runs lets the Web UI and the ``temporal`` CLI read payloads, and ``persyn agent shred`` makes
them unreadable for good.

A private embedded stack under a temporary PERSYN_HOME with free ports, as a user runs it.
"""

from __future__ import annotations

import base64
import json
import os
import subprocess
import sys
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from temporal.devserver import free_port, temporal_binary

PERSYN = [sys.executable, "-m", "cli.main"]
SECRET = "MARIGOLD-seventy-seven"


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, str]]:
    root = tmp_path_factory.mktemp("persyn-codec-home")
    root.chmod(0o755)
    env = {
        **os.environ,
        "PERSYN_HOME": str(root),
        "PERSYN_TEMPORAL_ADDRESS": f"127.0.0.1:{free_port()}",
        "PERSYN_TEMPORAL_UI_PORT": str(free_port()),
        "PERSYN_POSTGRES_PORT": str(free_port()),
        "PERSYN_PROVIDER": "scripted",
        "PERSYN_CODEC_ENABLED": "true",
        "PERSYN_CODEC_PORT": str(free_port()),
        # Every process reads keys from the database each time: a shred shows at once.
        "PERSYN_CODEC_KEY_CACHE_SECONDS": "0",
    }
    for key in ("PERSYN_DATABASE_URL", "PERSYN_EMBEDDED", "PERSYN_CODEC_MASTER_KEY"):
        env.pop(key, None)
    yield env
    subprocess.run([*PERSYN, "down"], env=env, capture_output=True, check=False, timeout=120)


def run(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(args, env=env, capture_output=True, text=True, timeout=180, check=False)


def history(env: dict[str, str], workflow_id: str, *, codec: bool) -> str:
    """The text of every payload of the workflow's history as the ``temporal`` CLI shows it,
    with or without the codec endpoint."""
    args = [str(temporal_binary()), "workflow", "show", "-w", workflow_id, "-o", "json"]
    args += ["--address", env["PERSYN_TEMPORAL_ADDRESS"]]
    if codec:
        args += ["--codec-endpoint", f"http://127.0.0.1:{env['PERSYN_CODEC_PORT']}"]
    shown = run(env, *args)
    assert shown.returncode == 0, shown.stderr
    return "\n".join(payload_texts(json.loads(shown.stdout)))


def payload_texts(node: object) -> Iterator[str]:
    """The ``data`` of every payload in the CLI's JSON (base64), decoded as far as it goes."""
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "data" and isinstance(value, str):
                yield base64.b64decode(value).decode(errors="replace")
            else:
                yield from payload_texts(value)
    elif isinstance(node, list):
        for item in node:
            yield from payload_texts(item)


def test_up_runs_the_codec_endpoint_and_shred_makes_history_unreadable(
    home: dict[str, str],
) -> None:
    up = run(home, *PERSYN, "up")
    assert up.returncode == 0, up.stderr
    ui = f"http://127.0.0.1:{home['PERSYN_TEMPORAL_UI_PORT']}/api/v1/settings"
    with urllib.request.urlopen(ui, timeout=10) as response:
        codec = json.load(response)["Codec"]
    assert codec["Endpoint"] == f"http://127.0.0.1:{home['PERSYN_CODEC_PORT']}"
    assert (Path(home["PERSYN_HOME"]) / "codec-master.key").stat().st_mode & 0o077 == 0
    status = run(home, *PERSYN, "status", "--json")
    assert status.returncode == 0, status.stdout + status.stderr
    [codec_endpoint] = [c for c in json.loads(status.stdout)["components"] if c["name"] == "codec"]
    assert codec_endpoint["healthy"] and codec_endpoint["pid"] is not None

    created = run(home, *PERSYN, "agent", "create", "ada", "--name", "Ada", "--persona", "Kind.")
    assert created.returncode == 0, created.stderr
    sent = run(home, *PERSYN, "send", "--agent", "ada", "--json", f"the vault code is {SECRET}")
    assert sent.returncode == 0, sent.stderr
    assert SECRET in json.loads(sent.stdout)["marker"]["text"]

    assert SECRET not in history(home, "agent/ada", codec=False)
    assert SECRET in history(home, "agent/ada", codec=True)

    refused = run(home, *PERSYN, "agent", "shred", "nobody", "--yes")
    assert refused.returncode == 1
    assert refused.stderr.strip() == "error: there is no agent 'nobody': see `persyn agent list`"
    shredded = run(home, *PERSYN, "agent", "shred", "ada", "--yes")
    assert shredded.returncode == 0, shredded.stderr
    assert shredded.stdout.startswith("shredded 1 key of ada")

    after = history(home, "agent/ada", codec=True)
    assert SECRET not in after
    assert "payload shredded: the key of agent 'ada' was deleted" in after
