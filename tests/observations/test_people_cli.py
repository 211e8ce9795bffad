"""``persyn people``: operator facts, the dossier and its cache, and one-line errors."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from schemas.settings import get_settings
from tests.cli_calls import ok, refused
from tests.harness import Stack
from tests.observations.conftest import Cast

BRIEF = "Una teaches in Bath; she said so herself."


@pytest.fixture(autouse=True)
def deployment(stack: Stack, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[None]:
    script = tmp_path / "script.json"
    script.write_text(
        json.dumps({"rules": [{"task": "observe", "system_match": "briefing", "reply": BRIEF}]})
    )
    monkeypatch.setenv("PERSYN_HOME", str(stack.home))
    monkeypatch.setenv("PERSYN_DATABASE_URL", stack.dsn)
    monkeypatch.setenv("PERSYN_PROVIDER", "scripted")
    monkeypatch.setenv("PERSYN_SCRIPTED_SCRIPT", str(script))
    monkeypatch.setenv("PERSYN_ENCODER", "none")
    get_settings.cache_clear()
    yield
    get_settings.cache_clear()


def test_operator_facts_and_a_brief_kept_until_the_facts_change(cast: Cast) -> None:
    a = ("-a", cast.agent)
    assert ok("people", "brief", *a, "Una").endswith("Nothing is known about Una yet.\n")
    noted = ok("people", "observe", *a, "Una", "lives in Leeds", "--type", "Home City")
    leeds = noted.split()[1].rstrip(":")
    assert noted == f"noted {leeds}: home_city = lives in Leeds\n"

    first = ok("people", "brief", *a, "Una")
    assert first.startswith("Una (1 facts; brief written now)") and BRIEF in first
    assert ok("people", "brief", *a, "una").startswith("Una (1 facts; brief kept)")

    ok("people", "observe", *a, "Una", "lives in Bath", "-t", "home_city", "--replaces", leeds)
    again = ok("people", "brief", *a, "Una")
    assert again.startswith("Una (1 facts; brief written now)")
    listed = ok("people", "facts", *a, "Una")
    assert "home_city: lives in Bath  [set by your operator" in listed and "Leeds" not in listed
    assert ok("people", "facts", *a, "Ned") == "no facts\n"


def test_mistakes_get_one_line_and_change_nothing(cast: Cast) -> None:
    a = ("-a", cast.agent)
    assert "NUL" in refused("people", "observe", *a, "Una", "a\x00b", "--type", "x")
    assert "10,000 characters" in refused("people", "observe", *a, "Una", "x" * 10_000, "-t", "x")
    assert "type" in refused("people", "observe", *a, "Una", "fine", "--type", "!!!")
    assert refused("people", "observe", *a, "Una", "fine", "-t", "x", "--replaces", "nope")
    assert refused("people", "observe", *a, "Nobody Here", "fine", "--type", "x")
    rtl = "\u202eevil"
    assert refused("people", "facts", *a, rtl)
    assert ok("people", "facts", *a, "Una") == "no facts\n"
