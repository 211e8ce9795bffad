"""``persyn notes``: notes in each scope, pins, supersession chains, imports and one-line errors."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import pytest

from schemas.agents import AgentCreate
from schemas.events import ChannelRef, Speaker
from schemas.settings import get_settings
from store.db import Database
from store.embedded import EmbeddedPostgres
from store.queries.agents import create_agent
from store.queries.people import resolve_speaker
from tests import cli_calls as calls
from tests.harness import unique

TTY = "terminal:tty"


@pytest.fixture(autouse=True)
def deployment(
    postgres: EmbeddedPostgres, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> Iterator[None]:
    monkeypatch.setenv("PERSYN_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("PERSYN_DATABASE_URL", postgres.dsn)
    monkeypatch.setenv("PERSYN_ENCODER", "none")
    get_settings.cache_clear()
    yield
    get_settings.cache_clear()


@dataclass
class Cast:
    """An agent of the test's own, and Una and Ned, whom it met on ``terminal:tty``."""

    agent: str
    una: str
    ned: str

    @property
    def a(self) -> tuple[str, str]:
        """The ``--agent`` option."""
        return ("-a", self.agent)


@pytest.fixture
async def cast(db: Database) -> Cast:
    handle = unique("notes")
    async with db.session() as session:
        await create_agent(
            session, spec=AgentCreate(handle=handle, name="Notes Test", persona="A tester.")
        )
    ids: list[str] = []
    for speaker_id, name in (("u1", "Una"), ("u2", "Ned")):
        async with db.session() as session:
            found = await resolve_speaker(
                session,
                agent=handle,
                channel=ChannelRef(service="terminal", channel="tty"),
                speaker=Speaker(speaker_id=speaker_id, display_name=name),
                seen_at=datetime.now(UTC),
            )
            ids.append(found.person_id)
    return Cast(agent=handle, una=ids[0], ned=ids[1])


def ok(*args: str) -> str:
    return calls.ok("notes", *args)


def refused(*args: str) -> str:
    return calls.refused("notes", *args)


def added(*args: str) -> str:
    """Add a note; its ID."""
    out = ok("add", *args)
    assert out.startswith("added ")
    return out.split()[1]


def stored(cast: Cast) -> list[dict[str, object]]:
    """Every note of the agent's, superseded ones too."""
    found = json.loads(ok("list", *cast.a, "--all", "--json"))
    assert isinstance(found, list)
    return found


def test_a_note_in_each_scope_round_trips(cast: Cast) -> None:
    own = added(*cast.a, "I answer in British English.")
    una = added(*cast.a, "Una prefers mornings.", "--person", "una", "--no-pin")
    tty = added(*cast.a, "This terminal is shared by the whole lab.", "--channel", TTY)

    listed = ok("list", *cast.a).splitlines()
    assert len(listed) == 3
    line = {row.split()[0]: row for row in listed}
    assert line[own].startswith(
        f"{own}  pinned    agent  I answer in British English.  [operator, "
    )
    assert f"{una}  unpinned  person Una  Una prefers mornings.  [operator, " in line[una]
    assert f"pinned    channel {TTY}  This terminal" in line[tty]

    assert ok("list", *cast.a, "--person", cast.una).splitlines() == [line[una]]
    assert ok("list", *cast.a, "--channel", TTY).splitlines() == [line[tty]]
    assert ok("list", *cast.a, "--person", "Ned") == "no notes\n"

    shown = ok("show", *cast.a, una)
    assert "about:         person Una" in shown and "pinned:        no" in shown
    assert "source:        operator" in shown and "written by:    operator" in shown
    assert "superseded by: - (live)" in shown and shown.endswith("\nUna prefers mornings.\n")
    as_json = json.loads(ok("show", *cast.a, tty, "--json"))
    assert as_json["note"]["scope"] == "channel" and as_json["note"]["scope_id"] == TTY
    assert as_json["note"]["pinned"] is True and as_json["history"][0]["id"] == tty
    assert json.loads(ok("show", *cast.a, own.lower(), "--json"))["about"] == "agent"


GREEN_TEA = "Una drinks green tea every morning."


def test_a_near_duplicate_is_added_with_a_hint(cast: Cast) -> None:
    first = added(*cast.a, GREEN_TEA, "--person", "Una")
    out = ok("add", *cast.a, "Una drinks green tea each morning.", "--person", "u1")
    new = out.split()[1]
    lines = out.splitlines()
    assert lines[1] == f"similar: {first} (holds most of its words) {GREEN_TEA}"
    assert (
        lines[2]
        == f"(if it replaces one: persyn notes supersede -a {cast.agent} {first} --by {new})"
    )
    assert "similar" not in ok("add", *cast.a, "Ned plays the oboe.", "--person", "Ned")
    # Half the words in common, though less than most of the new note's: listed by score.
    coffee = ok("add", *cast.a, "Una drinks black coffee every morning.", "--person", "Una")
    assert f"similar: {first} (score 0.50) {GREEN_TEA}" in coffee.splitlines()


def test_superseding_with_text_hides_the_old_note(cast: Cast) -> None:
    old = added(*cast.a, "The lab meets on Mondays.", "--channel", TTY)
    out = ok("supersede", *cast.a, old, "The lab meets on Tuesdays.")
    assert out.startswith("added ") and f"pinned, supersedes {old})" in out
    new = out.split()[1]

    listed = ok("list", *cast.a)
    assert new in listed and old not in listed
    everything = ok("list", *cast.a, "--all")
    assert f"{old}  pinned    channel {TTY}" in everything
    assert f"(superseded by {new})" in everything
    assert f"superseded by: {new}" in ok("show", *cast.a, old)
    assert f"replaced:      {old}" in ok("show", *cast.a, new)

    quiet = ok("supersede", *cast.a, new, "The lab meets on Wednesdays.", "--no-pin")
    assert "(unpinned, supersedes" in quiet


def test_links_refuse_cycles_and_second_superseders(cast: Cast) -> None:
    a = added(*cast.a, "Alpha.")
    b = added(*cast.a, "Bravo.")
    c = added(*cast.a, "Charlie.")
    assert ok("supersede", *cast.a, b, "--by", a) == f"{a} now supersedes {b}\n"

    assert "cycle" in refused("supersede", *cast.a, a, "--by", b)
    assert f"already superseded by {a}" in refused("supersede", *cast.a, b, "--by", c)
    assert "already superseded" in refused("supersede", *cast.a, b, "Delta.")
    assert len(stored(cast)) == 3

    una = added(*cast.a, "Una's note.", "--person", "Una")
    assert "scope" in refused("supersede", *cast.a, una, "--by", c)
    assert "one of them" in refused("supersede", *cast.a, c)
    assert "one of them" in refused("supersede", *cast.a, c, "Echo.", "--by", a)
    assert "not a ULID" in refused("show", *cast.a, "nope")
    assert "there is no note" in refused("remove", *cast.a, "01JD3M6Z8Q4N1V5X7B2C9E0F1G")


def test_removing_the_middle_of_a_chain_keeps_the_old_note_hidden(cast: Cast) -> None:
    a = added(*cast.a, "Version one.")
    b = ok("supersede", *cast.a, a, "Version two.").split()[1]
    c = ok("supersede", *cast.a, b, "Version three.").split()[1]

    assert ok("remove", *cast.a, b) == f"removed {b}\n"
    assert ok("list", *cast.a).split()[0] == c
    assert len(ok("list", *cast.a).splitlines()) == 1
    assert f"supersedes:    {a}" in ok("show", *cast.a, c)
    assert f"(superseded by {c})" in ok("list", *cast.a, "--all")
    assert "there is no note" in refused("show", *cast.a, b)


def test_bad_text_and_scopes_get_one_line_and_store_nothing(cast: Cast) -> None:
    limit = get_settings().notes.max_bytes
    assert "NUL" in refused("add", *cast.a, "a\x00b")
    assert "U+0007" in refused("add", *cast.a, "a\x07b")
    long = "a" + "é" * (limit // 2)  # fewer characters than bytes; one byte over
    assert len(long.encode()) == limit + 1
    assert f"the limit is {limit:,}" in refused("add", *cast.a, long)
    assert "NUL" in refused("supersede", *cast.a, "01JD3M6Z8Q4N1V5X7B2C9E0F1G", "a\x00b")

    assert "not both" in refused("add", *cast.a, "x", "--person", "Una", "--channel", TTY)
    assert "not both" in refused("list", *cast.a, "--person", "Una", "--channel", TTY)
    assert "no contact" in refused("add", *cast.a, "x", "--person", "Nobody")
    assert "no channel" in refused("add", *cast.a, "x", "--channel", "web:elsewhere")
    assert "service:channel" in refused("list", *cast.a, "--channel", "tty")
    assert stored(cast) == []

    assert "there is no agent" in refused("list", "-a", "no-such-agent")
    assert "there is no agent" in refused("add", "-a", "no-such-agent", "x")


def _jsonl(path: Path, *rows: dict[str, object]) -> str:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return str(path)


def test_import_stores_unpinned_imported_notes(cast: Cast, tmp_path: Path) -> None:
    file = _jsonl(
        tmp_path / "notes.jsonl",
        {"text": "I keep a garden."},
        {"text": "Una is a teacher.", "scope": "person", "who": "Una", "pinned": False},
        {"text": "The lab's terminal.", "scope": "channel", "channel": TTY},
    )
    assert ok("import", *cast.a, file) == "imported 3 notes\n"
    notes = stored(cast)
    assert [n["about"] for n in notes] == ["agent", f"channel {TTY}", "person Una"]
    assert all(n["pinned"] is False and n["source"] == "imported" for n in notes)
    assert notes[2]["written_by"] == "imported from notes.jsonl line 2"
    assert "unpinned  person Una  Una is a teacher.  [imported, " in ok("list", *cast.a)


def test_an_import_with_a_pin_or_an_unknown_field_stores_nothing(
    cast: Cast, tmp_path: Path
) -> None:
    pinned = _jsonl(
        tmp_path / "pinned.jsonl",
        {"text": "Fine."},
        {"text": "Obey me.", "pinned": True},
        {"text": "Also fine."},
    )
    line = refused("import", *cast.a, pinned)
    assert "line 2" in line and "cannot be pinned" in line

    odd = _jsonl(
        tmp_path / "odd.jsonl", {"text": "Fine."}, {"text": "Fine too."}, {"text": "x", "hue": 1}
    )
    line = refused("import", *cast.a, odd)
    assert "line 3" in line and "unknown field 'hue'" in line

    nobody = _jsonl(tmp_path / "nobody.jsonl", {"text": "x", "scope": "person", "who": "Zed"})
    assert "line 1" in refused("import", *cast.a, nobody)
    assert "cannot read" in refused("import", *cast.a, str(tmp_path / "missing.jsonl"))
    assert stored(cast) == []
