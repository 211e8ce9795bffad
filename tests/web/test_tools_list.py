"""``persyn tools list`` as an operator runs it: every tool, its source, and why one is absent."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

PERSYN = Path(sys.executable).with_name("persyn")
ROOT = Path(__file__).resolve().parents[2]


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
        "approval": "never",
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
    assert lines["calculate"].split()[1:] == ["built-in", "approval:", "never", "available"]
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


def test_each_tool_says_when_it_waits_for_approval_for_this_agent(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    (home / "persyn.toml").write_text(
        f"""
[sandbox]
network = "research"

[approvals]
tools = {{ calculate = "always", "*_skill" = "always", "mcp__demo__echo" = "never" }}

[approvals.agents.bob]
tools = {{ calculate = "never", message_contact = "never", run_code = "always" }}

[mcp]
connect_timeout_seconds = 60

[mcp.servers.demo]
enabled = true
transport = "stdio"
command = {json.dumps(sys.executable)}
args = ["-m", "tests.mcp.servers.demo", "stdio"]
env = {{ PYTHONPATH = {json.dumps(str(ROOT))} }}

[mcp.servers.gone]
enabled = true
transport = "stdio"
command = {json.dumps(str(tmp_path / "no-such-server"))}
"""
    )
    env = {"PERSYN_PROVIDER": "anthropic", "ANTHROPIC_API_KEY": "test-key"}
    ada = persyn(home, "--agent", "ada", "--json", **env)
    assert ada.returncode == 0, ada.stderr
    rows = {name: row["approval"] for name, row in _by_name(ada.stdout).items()}
    assert rows["calculate"] == "always"  # the deployment's rule
    assert rows["message_contact"] == "first contact"  # the default for someone new
    assert rows["run_code"] == "with network"  # the sandbox has a network
    assert rows["load_skill"] == rows["write_skill"] == "always"  # a pattern, on skill tools
    assert rows["remember_fact"] == "never"
    # A tool server's tools wait unless the operator allowed them outright; so would those
    # of a server that is down (its one row).
    assert rows["mcp__demo__add"] == "always" and rows["mcp__demo__echo"] == "never"
    [gone] = [row for row in json.loads(ada.stdout) if row["source"] == "mcp:gone"]
    assert (gone["name"], gone["available"], gone["approval"]) == ("*", False, "always")

    # Bob's own rules win over the deployment's and the defaults.
    bob = persyn(home, "--agent", "bob", "--json", **env)
    rows = {name: row["approval"] for name, row in _by_name(bob.stdout).items()}
    assert (rows["calculate"], rows["message_contact"], rows["run_code"]) == (
        "never",
        "never",
        "always",
    )

    # The table says it in a column of its own; without a network run_code never waits.
    text = persyn(home, "--agent", "ada", PERSYN_SANDBOX__NETWORK="none", **env)
    assert text.returncode == 0, text.stderr
    lines = {line.split()[0]: line for line in text.stdout.splitlines()}
    assert "  approval: always " in lines["calculate"]
    assert "  approval: first contact " in lines["message_contact"]
    assert "  approval: never " in lines["run_code"]

    # Approvals switched off: nothing waits.
    off = persyn(home, "--agent", "ada", "--json", PERSYN_APPROVALS__ENABLED="false", **env)
    assert {row["approval"] for row in json.loads(off.stdout)} == {"never"}
