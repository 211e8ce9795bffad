"""``persyn skills list|show|refresh`` as a user runs them: output, and one-line errors."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.skills.conftest import skill_text, write_skill

PERSYN = Path(sys.executable).with_name("persyn")


def persyn(home: Path, supplied: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {
        **os.environ,
        "PERSYN_HOME": str(home),
        "PERSYN_SKILLS__SUPPLIED_DIR": str(supplied),
    }
    return subprocess.run(
        [str(PERSYN), "skills", *args], env=env, capture_output=True, text=True, timeout=60
    )


def test_list_show_and_refresh(tmp_path: Path, supplied: Path) -> None:
    home = tmp_path / "home"

    listed = persyn(home, supplied, "list", "--json")
    assert listed.returncode == 0, listed.stderr
    assert {(s["name"], s["protected"]) for s in json.loads(listed.stdout)} == {
        ("brew-tea", False),
        ("keep-safe", True),
    }

    refreshed = persyn(home, supplied, "refresh", "--agent", "ada")
    assert refreshed.stdout.strip() == "ada: restored none; added brew-tea, keep-safe"

    library = home / "skills" / "ada"
    (library / "keep-safe" / "SKILL.md").write_text(skill_text("keep-safe", "Mine now."))
    write_skill(library, "broken", "---\nname: [\n---\n")
    again = persyn(home, supplied, "refresh")
    assert again.returncode == 0
    assert again.stdout.strip() == "ada: restored keep-safe; added none"
    assert "skill skipped:" in again.stderr and "broken" in again.stderr

    mine = persyn(home, supplied, "list", "--agent", "ada")
    assert mine.stdout.splitlines() == [
        "brew-tea (supplied): How to brew tea.",
        "keep-safe (supplied, protected): A protected procedure.",
    ]

    shown = persyn(home, supplied, "show", "keep-safe", "--agent", "ada")
    assert "protected: yes" in shown.stdout and "resources: notes.md" in shown.stdout
    assert shown.stdout.rstrip().endswith("Never change me.")
    resource = persyn(
        home, supplied, "show", "keep-safe", "--agent", "ada", "--resource", "notes.md"
    )
    assert resource.stdout == "original notes"


def test_mistakes_are_one_line_errors(tmp_path: Path, supplied: Path) -> None:
    home = tmp_path / "home"
    persyn(home, supplied, "refresh", "--agent", "ada")
    cases = [
        (("show", "nope", "--agent", "ada"), "no skill named 'nope'; your skills: brew-tea"),
        (("show", "../etc"), "may hold only lowercase letters"),
        (("show", "keep-safe", "--agent", "ada", "--resource", "../x"), "stay inside"),
        (("list", "--agent", "../etc"), "not an agent handle"),
        (("list", "--agent", "bob"), "has no skill library yet"),
        (("show", "a\x01" + "x" * 10_000), "at most 64 characters"),
    ]
    for args, message in cases:
        result = persyn(home, supplied, *args)
        assert result.returncode == 1, args
        assert result.stderr.startswith("error: ") and message in result.stderr, result.stderr
        assert len(result.stderr.strip().splitlines()) == 1 and "Traceback" not in result.stderr


def test_switched_off_skills_say_so(tmp_path: Path, supplied: Path) -> None:
    env_off = {**os.environ, "PERSYN_HOME": str(tmp_path), "PERSYN_SKILLS__ENABLED": "false"}
    result = subprocess.run(
        [str(PERSYN), "skills", "list"], env=env_off, capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 1
    assert (
        result.stderr.strip()
        == "error: skills are unavailable: switched off (skills.enabled = false)"
    )
