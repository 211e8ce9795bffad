"""``persyn tools list`` as an operator runs it: every tool, its source, and why one is absent."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

PERSYN = Path(sys.executable).with_name("persyn")


def persyn(home: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    environ = {k: v for k, v in os.environ.items() if not k.startswith("PERSYN_")}
    environ.update({"PERSYN_HOME": str(home), "DOCKER_HOST": "unix:///nonexistent.sock", **env})
    return subprocess.run(
        [str(PERSYN), "tools", "list", *args],
        env=environ,
        capture_output=True,
        text=True,
        timeout=120,
    )


def _by_name(out: str) -> dict[str, dict[str, Any]]:
    return {row["name"]: row for row in json.loads(out)}


def test_every_source_is_listed_with_its_availability(tmp_path: Path) -> None:
    archive = tmp_path / "archive"
    archive.mkdir()
    listed = persyn(
        tmp_path / "home",
        "--agent",
        "ada",
        "--json",
        PERSYN_PROVIDER="anthropic",
        ANTHROPIC_API_KEY="test-key",
        PERSYN_WEB__SEARCH="true",
        PERSYN_WEB__REFERENCE_DIR=str(archive),
    )
    assert listed.returncode == 0, listed.stderr
    rows = _by_name(listed.stdout)

    assert rows["calculate"] == {
        "name": "calculate",
        "source": "built-in",
        "available": True,
        "reason": "",
    }
    assert rows["create_reminder"]["available"] and rows["read_url"]["available"]
    assert rows["lookup_reference"]["available"]
    assert rows["web_search"]["source"] == "provider" and rows["web_search"]["available"]
    assert rows["openai_web_search"]["reason"] == "not offered to anthropic models"
    # No engine at that socket: the sandbox tool is there, unavailable, with the reason.
    assert rows["run_code"]["source"] == "sandbox" and not rows["run_code"]["available"]
    assert "Docker" in rows["run_code"]["reason"]
    assert rows["load_skill"]["source"] == "skill"


def test_switched_off_groups_say_which_setting(tmp_path: Path) -> None:
    listed = persyn(
        tmp_path / "home",
        "--agent",
        "ada",
        PERSYN_PROVIDER="anthropic",
        ANTHROPIC_API_KEY="test-key",
        PERSYN_WEB__READ_URL="false",
    )
    assert listed.returncode == 0, listed.stderr
    lines = {line.split()[0]: line for line in listed.stdout.splitlines()}
    assert "unavailable: off (PERSYN_WEB__READ_URL=false)" in lines["read_url"]
    assert "unavailable: off (PERSYN_WEB__SEARCH)" in lines["web_search"]
    assert "PERSYN_WEB__REFERENCE_DIR" in lines["lookup_reference"]
    assert lines["calculate"].split()[1:] == ["built-in", "available"]
    assert "unavailable: no images endpoint (PERSYN_IMAGES__BASE_URL)" in lines["generate_image"]


def test_the_local_model_is_offered_nothing_and_a_bad_handle_is_one_line(tmp_path: Path) -> None:
    listed = persyn(tmp_path / "home", "--agent", "ada", "--json", PERSYN_PROVIDER="local")
    assert listed.returncode == 0, listed.stderr
    assert _by_name(listed.stdout)["calculate"]["reason"] == "the local model is offered no tools"

    bad = persyn(tmp_path / "home", "--agent", "Not A Handle")
    assert bad.returncode == 1
    assert (
        bad.stderr.strip()
        == "error: 'Not A Handle' is not an agent handle (lowercase letters, digits and -)"
    )
