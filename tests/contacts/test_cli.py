"""``persyn contacts`` and ``persyn channels`` as typed: results, and one-line errors."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from schemas.settings import get_settings
from tests.cli_calls import ok, refused
from tests.contacts.conftest import Pair
from tests.harness import Stack


@pytest.fixture(autouse=True)
def deployment(stack: Stack, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setenv("PERSYN_HOME", str(stack.home))
    monkeypatch.setenv("PERSYN_DATABASE_URL", stack.dsn)
    get_settings.cache_clear()
    yield
    get_settings.cache_clear()


def test_the_operator_curates_and_folds(pair: Pair) -> None:
    a = ("-a", pair.agent)
    listed = ok("contacts", "list", *a)
    assert pair.home in listed and pair.work in listed
    ok("contacts", "attach", *a, "ada", "--address", "email=ada@example.org")
    ok("contacts", "prefer", *a, "ada", "terminal:home")
    shown = ok("contacts", "show", *a, "Ada")
    assert "address:   email  ada@example.org" in shown and "prefers:   terminal:home" in shown

    folded = ok("contacts", "fold", *a, "U123", "ada", "--name", "Ada Lovelace", "--by", "ops")
    assert folded.startswith(f"folded {pair.work} into {pair.home} as Ada Lovelace")
    assert "team:work  U123" in ok("contacts", "show", *a, "Ada Lovelace")

    assert "team:work" in ok("channels", "list", *a)
    assert ok("channels", "group", *a, "team:work", "ada") == "team:work is in group ada\n"
    assert "no group" in ok("channels", "group", *a, "team:work")


def test_mistakes_get_one_line_and_change_nothing(pair: Pair) -> None:
    a = ("-a", pair.agent)
    before = ok("contacts", "list", *a, "--json")
    assert "folded into themselves" in refused("contacts", "fold", *a, "ada", pair.home)
    assert "has no contact 'Grace'" in refused("contacts", "fold", *a, "ada", "Grace")
    assert "no contact of" in refused("contacts", "detach", *a, "team:work", "U999")
    assert "NUL" in refused("contacts", "rename", *a, "ada", "Ada\x00")
    assert "10,000 characters" in refused("contacts", "rename", *a, "ada", "A" * 10_000)
    assert "U+202E" in refused("contacts", "rename", *a, "ada", "Ada \u202eecalevoL")
    assert "not a channel" in refused("contacts", "prefer", *a, "ada", "nowhere")
    assert "not a group name" in refused("channels", "group", *a, "team:work", "a b")
    assert "no channel" in refused("channels", "group", *a, "team:nowhere", "g")
    assert "no agent" in refused("contacts", "list", "-a", "nobody-here")
    assert ok("contacts", "list", *a, "--json") == before
