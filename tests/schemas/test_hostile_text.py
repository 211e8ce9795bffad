"""Every handler's door, fed arbitrary JSON and arbitrary Unicode (issue 26, finding 1).

A NUL in ``speaker.speaker_id`` was accepted at the door and then failed every attempt of the
step that stored it, holding the agent's inbox for everyone. The class, not the instance: for
every handler in the published contract, any JSON value either decodes to a model whose every
string PostgreSQL and a JSON encoder can hold, or is refused with one line naming what to fix.
"""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import BaseModel
from temporalio.exceptions import ApplicationError

from contract.catalog import HANDLERS, HandlerSpec
from schemas.events import SubmitEventInput, first_unstorable
from schemas.ids import new_ulid
from schemas.text import unstorable
from workflows.handlers import INVALID_INPUT, decode

HOSTILE_CHARACTERS = [
    "\x00",
    "\ud800",
    "\udfff",
    "\u202e",
    "\u2066",
    "\u200b",
    "\ufeff",
    "\x1b",
    "\x7f",
    "\n",
    "\uffff",
    "\U0010ffff",
]
"""NUL, lone surrogates, bidi controls, zero-width and format characters, escapes, newlines,
noncharacters."""

hostile_text = st.one_of(
    st.text(alphabet=st.sampled_from(HOSTILE_CHARACTERS) | st.characters(), max_size=40),
    st.builds(
        lambda a, h, b: a + h + b,
        st.text(max_size=10),
        st.sampled_from(HOSTILE_CHARACTERS),
        st.text(max_size=10),
    ),
    st.just("x" * 100_000),
)
"""Arbitrary Unicode, including code points no UTF-8 encoder accepts."""

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | hostile_text,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(hostile_text, inner, max_size=4),
    max_leaves=12,
)
"""Arbitrary JSON, with hostile strings as values and as keys."""

VALID_SUBMIT: dict[str, Any] = {
    "event": {
        "event_id": new_ulid(),
        "channel": {"service": "web", "channel": "support"},
        "speaker": {"speaker_id": "u-17", "display_name": "Ines"},
        "text": "hello",
    }
}
STRING_FIELDS = [
    ("event", "channel", "channel"),
    ("event", "channel", "service"),
    ("event", "speaker", "speaker_id"),
    ("event", "speaker", "display_name"),
    ("event", "text"),
    ("event", "event_id"),
]


def strings_in(value: object) -> list[str]:
    """Every string in a JSON-shaped value, keys included (iteratively: no recursion limit)."""
    found: list[str] = []
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            found.append(item)
        elif isinstance(item, dict):
            found += [k for k in item if isinstance(k, str)]
            stack += list(item.values())
        elif isinstance(item, list):
            stack += item
    return found


def outcome(spec: HandlerSpec, payload: object) -> BaseModel | ApplicationError:
    try:
        return decode(spec.name, spec.input, [payload])
    except ApplicationError as err:
        return err


def assert_refused_or_storable(spec: HandlerSpec, payload: object) -> None:
    result = outcome(spec, payload)
    if isinstance(result, ApplicationError):
        assert result.type == INVALID_INPUT and result.non_retryable
        assert result.message.startswith(f"invalid {spec.name} input: ")
        assert "\n" not in result.message, "the refusal is one line"
        return
    dumped = result.model_dump(mode="python")
    bad = [s for s in strings_in(dumped) if unstorable(s) is not None]
    assert bad == [], f"{spec.name} accepted what PostgreSQL cannot store: {bad!r}"
    json.dumps(result.model_dump(mode="json"))  # and a strict JSON encoder can write it


@pytest.mark.parametrize("spec", HANDLERS, ids=lambda s: f"{s.workflow}.{s.name}")
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(payload=json_values)
def test_any_json_is_refused_in_one_line_or_decodes_to_storable_text(
    spec: HandlerSpec, payload: object
) -> None:
    assert_refused_or_storable(spec, payload)


SUBMIT = next(s for s in HANDLERS if s.name == "submit")


@settings(max_examples=200, deadline=None)
@given(field=st.sampled_from(STRING_FIELDS), text=hostile_text)
def test_a_hostile_string_in_any_field_of_an_event_is_refused_or_storable(
    field: tuple[str, ...], text: str
) -> None:
    payload = copy.deepcopy(VALID_SUBMIT)
    target = payload
    for key in field[:-1]:
        target = target[key]
    target[field[-1]] = text
    assert_refused_or_storable(SUBMIT, payload)


@pytest.mark.parametrize(
    ("field", "value", "named"),
    [
        (("event", "speaker", "speaker_id"), "u\x0017", "event.speaker.speaker_id"),
        (("event", "speaker", "display_name"), "In\x00es", "event.speaker.display_name"),
        (("event", "channel", "channel"), "sup\x00port", "event.channel.channel"),
        (("event", "speaker", "speaker_id"), "u\ud80017", "event.speaker.speaker_id"),
        (("event", "speaker", "display_name"), "\u202eseni", "event.speaker.display_name"),
        (("event", "channel", "channel"), "x\ny", "event.channel.channel"),
        (("event", "text"), "hi\x00", "event.text"),
    ],
)
def test_the_refusal_names_the_field_and_what_to_fix(
    field: tuple[str, ...], value: str, named: str
) -> None:
    payload = copy.deepcopy(VALID_SUBMIT)
    target = payload
    for key in field[:-1]:
        target = target[key]
    target[field[-1]] = value
    refused = outcome(SUBMIT, payload)
    assert isinstance(refused, ApplicationError), "accepted"
    assert named in refused.message
    assert any(word in refused.message for word in ("remove it", "re-encode", ": use "))


def test_a_nul_in_a_key_of_a_nested_value_is_refused() -> None:
    payload = copy.deepcopy(VALID_SUBMIT)
    payload["event"]["speaker"] = {"speaker_id\x00": "u-17"}
    refused = outcome(SUBMIT, payload)
    assert isinstance(refused, ApplicationError)
    assert "NUL" in refused.message


def test_ten_thousand_levels_of_nesting_are_refused_without_recursion() -> None:
    deep: object = "x"
    for _ in range(10_000):
        deep = {"a": [deep]}
    for spec in HANDLERS:
        assert_refused_or_storable(spec, deep)
    payload = copy.deepcopy(VALID_SUBMIT)
    payload["event"]["speaker"]["display_name"] = deep
    refused = outcome(SUBMIT, payload)
    assert isinstance(refused, ApplicationError)
    assert "event.speaker.display_name" in refused.message


def test_the_published_name_pattern_says_what_the_door_refuses() -> None:
    schema = SubmitEventInput.model_json_schema()
    speaker = schema["$defs"]["Speaker"]["properties"]["speaker_id"]
    assert "\\u0000" in speaker["pattern"] and "\\u202E" in speaker["pattern"]


def _refused_by_definition(text: str) -> bool:
    """What the door refuses, spelled out a character at a time: NUL or a lone surrogate."""
    return any(ch == "\x00" or "\ud800" <= ch <= "\udfff" for ch in text)


@given(text=hostile_text)
def test_the_fast_check_refuses_exactly_nul_and_lone_surrogates(text: str) -> None:
    problem = unstorable(text)
    assert (problem is not None) == _refused_by_definition(text)
    if problem is not None and "\x00" not in text:
        first = next(ch for ch in text if "\ud800" <= ch <= "\udfff")
        assert f"U+{ord(first):04X}" in problem  # names the first one


@given(payload=json_values)
def test_the_walk_finds_an_unstorable_string_wherever_it_is(payload: object) -> None:
    found = first_unstorable(payload, "")
    assert (found is not None) == any(_refused_by_definition(s) for s in strings_in(payload))


def test_a_nested_input_is_walked_once_and_a_model_on_its_own_still_walks_its_own(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from schemas import events

    walks: list[object] = []
    real = events.first_unstorable

    def counted(value: object, path: str) -> tuple[str, str] | None:
        walks.append(value)
        return real(value, path)

    monkeypatch.setattr(events, "first_unstorable", counted)
    payload = copy.deepcopy(VALID_SUBMIT)
    SubmitEventInput.model_validate(payload)
    assert walks == [payload]  # the event, its channel and speaker are not walked again
    walks.clear()
    speaker = payload["event"]["speaker"]
    events.Speaker.model_validate(speaker)
    assert walks == [speaker]
    with pytest.raises(ValueError, match="NUL"):
        events.Speaker.model_validate({**speaker, "display_name": "a\x00b"})
