"""``persyn notes import`` over arbitrary lines: each file is read whole, or refused in one line
that names the line to fix; nothing it reads can hold what the store cannot."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from schemas.contacts import ContactError
from schemas.notes import NoteError, note_text
from schemas.text import InvalidTextError, unstorable
from usecases.notes_import import parse_import

LIMIT = 200
JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(), inner, max_size=3),
    max_leaves=8,
)
ENTRY = st.fixed_dictionaries(
    {"text": st.text(max_size=120)},
    optional={
        "pinned": st.booleans(),
        "scope": st.sampled_from(["agent", "person", "channel", "team"]),
        "who": st.text(max_size=20),
        "channel": st.text(max_size=20),
    },
)
LINE = st.one_of(ENTRY.map(json.dumps), JSON.map(json.dumps), st.text(max_size=60))


@settings(max_examples=400)
@given(st.lists(LINE, min_size=1, max_size=6))
def test_any_file_is_read_or_refused_naming_its_line(lines: list[str]) -> None:
    try:
        parsed = parse_import(lines, LIMIT)
    except (NoteError, ContactError, InvalidTextError) as err:
        message = str(err)
        assert "\n" not in message and message
        assert message.startswith("line ") or message.startswith("the file holds no notes")
        return
    assert parsed and all(1 <= line.number <= len(lines) for line in parsed)
    for line in parsed:
        assert unstorable(line.text) is None and len(line.text.encode()) <= LIMIT


AGENT_NOTE = st.fixed_dictionaries(
    {"text": st.text(max_size=120)}, optional={"pinned": st.just(False)}
).map(json.dumps)


@settings(max_examples=200)
@given(st.lists(AGENT_NOTE, min_size=1, max_size=6))
def test_a_file_of_well_formed_lines_keeps_every_note_or_names_the_bad_text(
    lines: list[str],
) -> None:
    try:
        parsed = parse_import(lines, LIMIT)
    except NoteError as err:
        number = int(str(err).split(":", 1)[0].removeprefix("line "))
        with pytest.raises(NoteError):  # the line it names holds text no note may hold
            note_text(json.loads(lines[number - 1])["text"], max_bytes=LIMIT)
        return
    assert [line.number for line in parsed] == list(range(1, len(lines) + 1))
